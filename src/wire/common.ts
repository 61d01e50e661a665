import { type Static, type TSchema, Type } from '@sinclair/typebox';

/** A request field that may be null (`anyOf`: TypeBox's request validator knows no type list). */
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
/**
 * The same for response fields: `type: [t, 'null']` rather than `anyOf`. Fastify's serializer
 * runs a full schema validation per value to pick an `anyOf` branch (a date-time format check,
 * a whole object for the page summary) on every record it writes; a type list it checks with
 * one `typeof`. Responses only: TypeBox's request validator knows no such kind.
 */
export const NullableOut = <T extends TSchema & { type: string }>(t: T) =>
  Type.Unsafe<Static<T> | null>({ ...t, type: [t.type, 'null'] });
export const OneOfStrings = <const T extends string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: values });
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T08:00:00.000Z'] });

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'The stable error code to match on, e.g. `artifact_not_found`.' }),
      message: Type.String({ description: 'For people; may change.' }),
      status: Type.Integer({ description: 'The HTTP status.' }),
      retry_after_seconds: Type.Optional(Type.Integer({ description: 'On 429, 503 and 507: when to retry.' })),
      retry_after: Type.Optional(Type.Integer({ description: 'The same as retry_after_seconds.' })),
      upgrade_url: Type.Optional(Type.String({ description: 'On plan limits: where to lift them.' })),
      request_id: Type.Optional(
        Type.String({ description: 'The X-Request-Id of the request: quote it to the operator.' }),
      ),
    }),
  },
  { $id: 'ErrorEnvelope', description: 'Every non-2xx response.' },
);
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;

/** The page fields of every keyset-paginated list. */
export const Pagination = Type.Object(
  {
    next_cursor: NullableOut(Type.String({ description: 'Pass as `cursor` for the next page; null on the last.' })),
    has_more: Type.Boolean(),
  },
  { $id: 'Pagination' },
);
export type Pagination = Static<typeof Pagination>;
