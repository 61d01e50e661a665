import { type Static, type TSchema, Type } from '@sinclair/typebox';

/** Wire shapes, declared once: they validate requests and produce the OpenAPI document. */
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
/**
 * The same for response fields: `type: [t, 'null']` rather than `anyOf`. Fastify's serializer
 * runs a full schema validation per value to pick an `anyOf` branch (a date-time format check,
 * a whole object for the page summary) on every record it writes; a type list it checks with
 * one `typeof`. Responses only: TypeBox's request validator knows no such kind.
 */
const NullableOut = <T extends TSchema & { type: string }>(t: T) =>
  Type.Unsafe<Static<T> | null>({ ...t, type: [t.type, 'null'] });
const OneOfStrings = <const T extends string[]>(values: T) => Type.Unsafe<T[number]>({ type: 'string', enum: values });
const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-22T08:00:00.000Z'] });

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      status: Type.Integer(),
      retry_after_seconds: Type.Optional(Type.Integer()),
      retry_after: Type.Optional(Type.Integer()),
      upgrade_url: Type.Optional(Type.String()),
      request_id: Type.Optional(Type.String()),
    }),
  },
  { $id: 'ErrorEnvelope', description: 'Every non-2xx response.' },
);

export const PageSummary = NullableOut(
  Type.Object({
    public_url: Type.String(),
    visibility: OneOfStrings(['unlisted', 'public']),
  }),
);

export const ArtifactRecord = Type.Object(
  {
    artifact_id: Type.String({ pattern: '^art_[A-Za-z0-9]{16}$' }),
    filename: Type.String(),
    content_type: Type.String(),
    size_bytes: Type.Integer(),
    content_hash: Type.String({ description: 'Hex SHA-256 of the bytes.' }),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    session_id: NullableOut(Type.String()),
    agent_id: NullableOut(Type.String()),
    created_at: Timestamp,
    expires_at: NullableOut(Timestamp),
    page: PageSummary,
  },
  { $id: 'Artifact' },
);

export const ArtifactList = Type.Object({
  artifacts: Type.Array(Type.Ref(ArtifactRecord)),
  next_cursor: NullableOut(Type.String()),
  has_more: Type.Boolean(),
});

export const SessionRecord = Type.Object(
  {
    session_id: Type.String(),
    artifact_count: Type.Integer(),
    is_sealed: Type.Boolean(),
    sealed_at: NullableOut(Timestamp),
    first_artifact_at: Timestamp,
    last_artifact_at: Timestamp,
  },
  { $id: 'Session' },
);

export const ArtifactIdParams = Type.Object({ id: Type.String({ description: 'An artifact id, art_…' }) });
export const SessionIdParams = Type.Object({ id: Type.String({ description: 'A session id' }) });

export const JsonUploadBody = Type.Object(
  {
    filename: Type.String({ minLength: 1 }),
    content: Type.String({ description: 'The bytes, base64 (at most 10 MB decoded).' }),
    content_encoding: Type.Optional(Type.Literal('base64')),
    content_type: Type.Optional(Type.String()),
    session_id: Type.Optional(Nullable(Type.String())),
    agent_id: Type.Optional(Nullable(Type.String())),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    ttl: Type.Optional(Type.String({ examples: ['7d', '12h', 'never'] })),
    transcript: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const MultipartUploadBody = Type.Object({
  file: Type.String({ format: 'binary', description: 'The bytes (at most 500 MB), with a filename.' }),
  filename: Type.Optional(Type.String()),
  content_type: Type.Optional(Type.String()),
  session_id: Type.Optional(Type.String()),
  agent_id: Type.Optional(Type.String()),
  ttl: Type.Optional(Type.String()),
  metadata: Type.Optional(Type.String({ description: 'A JSON object, as a string.' })),
  transcript: Type.Optional(Type.String({ enum: ['true', 'false'] })),
});

export const ListArtifactsQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String()),
    limit: Type.Optional(Type.String({ description: '1-200, default 50' })),
    session_id: Type.Optional(Type.String()),
    agent_id: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
    content_type: Type.Optional(Type.String()),
    created_after: Type.Optional(Timestamp),
    created_before: Type.Optional(Timestamp),
    transcript: Type.Optional(Type.String({ enum: ['true', 'false'] })),
  },
  {
    additionalProperties: true,
    description: 'Plus at most one `metadata.<key>=<value>` exact-match filter.',
  },
);

export const ListSessionsQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String()),
    after: Type.Optional(Type.String({ description: 'Alias of cursor.' })),
    limit: Type.Optional(Type.String()),
    created_after: Type.Optional(Timestamp),
    created_before: Type.Optional(Timestamp),
  },
  { additionalProperties: false },
);

export const DownloadUrl = Type.Object({
  download_url: Type.String(),
  expires_in: Type.Integer(),
  filename: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
});

export const CreateLinkBody = Type.Object(
  { expires_in: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_592_000, default: 604_800 })) },
  { additionalProperties: false },
);

export const LinkRecord = Type.Object({
  link_id: Type.String(),
  url: Type.String(),
  artifact_id: Type.String(),
  expires_at: Timestamp,
  created_at: Timestamp,
});

export const DeleteResult = Type.Object({
  artifact_id: Type.String(),
  deleted: Type.Literal(true),
  deleted_at: Timestamp,
});

export const SealResult = Type.Object({
  session_id: Type.String(),
  status: Type.Literal('sealed'),
  sealed_at: Timestamp,
  artifact_count: Type.Integer(),
});

export const WhoAmI = Type.Object({
  tenant_name: Type.String(),
  plan: Type.Union([Type.Literal('free'), Type.Literal('pro')]),
  api_key_last_4: Type.String(),
  usage_storage_bytes: Type.Integer(),
  plan_storage_limit_bytes: Type.Integer(),
  usage_requests_month: Type.Integer(),
  plan_requests_limit_month: Type.Integer(),
  active_links: Type.Integer(),
  max_active_links: Type.Integer(),
  rate_limit_sustained: Type.Integer(),
  rate_limit_burst: Type.Integer(),
});

/**
 * Error responses every authenticated route may give (503: shutting down, a busy blob on upload, or
 * a dependency that is away or too slow; see docs/deploy.md).
 */
export const authErrors = {
  401: Type.Ref(ErrorEnvelope),
  403: Type.Ref(ErrorEnvelope),
  429: Type.Ref(ErrorEnvelope),
  503: Type.Ref(ErrorEnvelope),
} as const;
export const artifactErrors = {
  ...authErrors,
  400: Type.Ref(ErrorEnvelope),
  404: Type.Ref(ErrorEnvelope),
  410: Type.Ref(ErrorEnvelope),
};

export const PublishBody = Type.Object({
  visibility: Type.Union([Type.Literal('unlisted'), Type.Literal('public')], {
    description: '`public` currently behaves like `unlisted`.',
  }),
  access: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('password')], { default: 'none' })),
  title: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  password: Type.Optional(
    Type.String({ description: 'Required with access=password (Pro only; refused for HTML). Hashed with Argon2id.' }),
  ),
});

export const PublishResult = Type.Object({
  page_id: Type.String({ pattern: '^pg_[A-Za-z0-9]{16}$' }),
  public_url: Type.String(),
  visibility: Type.Union([Type.Literal('unlisted'), Type.Literal('public')]),
  access: Type.Union([Type.Literal('none'), Type.Literal('password')]),
});

export const UnpublishResult = Type.Object({ page_id: Type.String(), unpublished: Type.Literal(true) });

export const SlugParams = Type.Object({ slug: Type.String({ description: 'A page slug, pg_…' }) });
