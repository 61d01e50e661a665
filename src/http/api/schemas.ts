import { Type } from '@sinclair/typebox';
import { ErrorEnvelope, Timestamp } from '../../wire/index.js';

/**
 * The HTTP side of the wire contract: path parameters, query strings and the error responses of
 * each route. The records and request bodies themselves are the wire schema (src/wire), re-exported
 * here for the routes. Every shape with an `$id` is a named component of the OpenAPI document
 * (`#/components/schemas/<$id>`): it is listed in `components`, registered once with
 * `app.addSchema`, and routes point at it with `Type.Ref`. The names are part of the contract
 * (generated clients use them): do not rename one.
 */
export * from '../../wire/index.js';

const TimestampParam = (description: string) => Type.String({ ...Timestamp, description });

/** An error response: the envelope, with what this status means on this operation. */
export const errorResponse = (description: string) => Type.Ref(ErrorEnvelope, { description });

export const ArtifactIdParams = Type.Object({ id: Type.String({ description: 'An artifact id, art_…' }) });
export const SessionIdParams = Type.Object({ id: Type.String({ description: 'A session id' }) });

/**
 * The list's filters. `metadata.<key>` cannot be a named parameter (OpenAPI has no pattern for
 * parameter names): the list operation's description documents it, and the core checks it
 * (parseArtifactQuery), which is why other parameters are let through here.
 */
export const ListArtifactsQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page.' })),
    limit: Type.Optional(Type.String({ description: 'Page size, 1-200, default 50.' })),
    session_id: Type.Optional(Type.String({ description: 'Only artifacts of this session.' })),
    agent_id: Type.Optional(Type.String({ description: 'Only artifacts of this agent.' })),
    filename: Type.Optional(Type.String({ description: 'Exact filename.' })),
    content_type: Type.Optional(Type.String({ description: 'Exact content type, e.g. `text/markdown`.' })),
    created_after: Type.Optional(TimestampParam('Exclusive lower bound on created_at.')),
    created_before: Type.Optional(TimestampParam('Exclusive upper bound on created_at.')),
    transcript: Type.Optional(
      Type.String({ enum: ['true', 'false'], description: '`true`: only transcripts (`metadata.type=transcript`).' }),
    ),
  },
  {
    additionalProperties: true,
    description: 'Plus up to 8 `metadata.<key>=<value>` exact-match filters, AND-ed (each key once).',
  },
);

export const ListSessionsQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page.' })),
    after: Type.Optional(Type.String({ description: 'Alias of cursor.' })),
    limit: Type.Optional(Type.String({ description: 'Page size, 1-200, default 50.' })),
    created_after: Type.Optional(TimestampParam('Exclusive lower bound on the session’s first artifact.')),
    created_before: Type.Optional(TimestampParam('Exclusive upper bound on the session’s first artifact.')),
  },
  { additionalProperties: false },
);

const EVENT_FILTER_FIELDS = {
  after: Type.Optional(
    Type.String({
      description: 'Only events after this event id (the last `event_id` you saw); `0` for the oldest kept.',
    }),
  ),
  types: Type.Optional(
    Type.String({
      description: 'Comma-separated event types, or prefixes such as `artifact.*`; default all.',
      examples: ['artifact.created,session.sealed'],
    }),
  ),
  session_id: Type.Optional(Type.String({ description: 'Only events of this session’s artifacts (and its seal).' })),
};

export const ListEventsQuery = Type.Object(
  {
    ...EVENT_FILTER_FIELDS,
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page (instead of after).' })),
    limit: Type.Optional(Type.String({ description: 'Page size, 1-200, default 50.' })),
  },
  { additionalProperties: false },
);

export const StreamEventsQuery = Type.Object(EVENT_FILTER_FIELDS, { additionalProperties: false });

export const ListLinksQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page, exactly as received.' })),
    limit: Type.Optional(Type.String({ description: '1-200, default 50' })),
  },
  { additionalProperties: false },
);

export const LinkIdParams = Type.Object({
  link_id: Type.String({ description: 'A link id, lnk_…' }),
});

export const SlugParams = Type.Object({ slug: Type.String({ description: 'A page slug, pg_…' }) });

/**
 * Error responses every authenticated route may give: 400 for any unknown query parameter, and
 * 503 while shutting down, a busy blob on upload, or a dependency that is away or too slow (see
 * docs/deploy.md).
 */
export const authErrors = {
  400: errorResponse('`invalid_request`: a malformed or unknown parameter, field or body.'),
  401: errorResponse(
    '`unauthorized`: the API key is missing, malformed, unknown or revoked, or its tenant is suspended (the message then says suspended).',
  ),
  403: errorResponse('`quota_exceeded`: a plan limit is reached.'),
  429: errorResponse('`rate_limited`: over the rate limit; `Retry-After` says when to try again.'),
  503: errorResponse(
    '`server_error`: a transient refusal (shutting down, or an upload’s bytes still being deleted); see `Retry-After`.',
  ),
};
export const artifactErrors = {
  ...authErrors,
  404: errorResponse('`artifact_not_found`: no such artifact in your tenant.'),
  410: errorResponse('`artifact_already_deleted` or `artifact_expired`.'),
};

/** The optional `Idempotency-Key` header of the calls that create something (uploads, presigned reservations). */
export const IdempotencyKeyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[\\x21-\\x7e]+$',
      description: '1-256 printable ASCII characters: a repeat within 24 hours replays the first answer.',
    }),
  ),
});
