import { type Static, type TSchema, Type } from '@sinclair/typebox';

/**
 * Wire shapes, declared once: they validate requests and produce the OpenAPI document. Every shape
 * with an `$id` is a named component of that document (`#/components/schemas/<$id>`): it is listed
 * in `components` below, registered once with `app.addSchema`, and routes point at it with
 * `Type.Ref`. The names are part of the contract (generated clients use them): do not rename one.
 */
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
const TimestampParam = (description: string) => Type.String({ ...Timestamp, description });

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

/** An error response: the envelope, with what this status means on this operation. */
export const errorResponse = (description: string) => Type.Ref(ErrorEnvelope, { description });

/** The page fields of every keyset-paginated list. */
export const Pagination = Type.Object(
  {
    next_cursor: NullableOut(Type.String({ description: 'Pass as `cursor` for the next page; null on the last.' })),
    has_more: Type.Boolean(),
  },
  { $id: 'Pagination' },
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

/** A page of artifacts (the lists are `allOf` Pagination and their items). */
export const ArtifactList = Type.Intersect(
  [Type.Ref(Pagination), Type.Object({ artifacts: Type.Array(Type.Ref(ArtifactRecord)) })],
  { $id: 'ArtifactList' },
);

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

export const SessionList = Type.Intersect(
  [Type.Ref(Pagination), Type.Object({ sessions: Type.Array(Type.Ref(SessionRecord)) })],
  { $id: 'SessionList' },
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
  { $id: 'JsonUpload', additionalProperties: false },
);

export const MultipartUploadBody = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'The bytes (at most 500 MB), with a filename.' }),
    filename: Type.Optional(Type.String()),
    content_type: Type.Optional(Type.String()),
    session_id: Type.Optional(Type.String()),
    agent_id: Type.Optional(Type.String()),
    ttl: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.String({ description: 'A JSON object, as a string.' })),
    transcript: Type.Optional(Type.String({ enum: ['true', 'false'] })),
  },
  { $id: 'MultipartUpload' },
);

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

export const DownloadUrl = Type.Object(
  {
    download_url: Type.String(),
    expires_in: Type.Integer({ description: 'Seconds the URL stays valid.' }),
    filename: Type.String(),
    content_type: Type.String(),
    size_bytes: Type.Integer(),
  },
  { $id: 'DownloadUrl' },
);

export const BatchDownloadUrlsBody = Type.Object(
  {
    artifact_ids: Type.Array(Type.String({ pattern: '^art_[A-Za-z0-9]{16}$' }), {
      minItems: 1,
      maxItems: 20,
      description: '1 to 20 artifact ids; a repeated id is answered twice.',
    }),
  },
  { $id: 'BatchDownloadUrlsRequest', additionalProperties: false },
);

export const BatchDownloadUrls = Type.Object(
  {
    download_urls: Type.Array(
      Type.Union([
        Type.Object({
          artifact_id: Type.String(),
          download_url: Type.String(),
          expires_in: Type.Integer(),
          filename: Type.String(),
          content_type: Type.String(),
          size_bytes: Type.Integer(),
        }),
        Type.Object({
          artifact_id: Type.String(),
          error: Type.Object(
            { code: Type.String(), message: Type.String(), status: Type.Integer() },
            {
              description:
                '`artifact_not_found` (unknown, or another tenant’s), `artifact_already_deleted` or `artifact_expired`.',
            },
          ),
        }),
      ]),
      { description: 'One item per requested id, in request order.' },
    ),
  },
  { $id: 'BatchDownloadUrls' },
);

export const ListLinksQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ description: 'next_cursor of the previous page, exactly as received.' })),
    limit: Type.Optional(Type.String({ description: '1-200, default 50' })),
  },
  { additionalProperties: false },
);

export const ListedLink = Type.Object(
  {
    link_id: Type.String({ pattern: '^lnk_[A-Za-z0-9]{20}$' }),
    url: Type.String({ description: 'The shareable download URL.' }),
    expires_at: Timestamp,
    created_at: Timestamp,
  },
  { $id: 'ListedLink' },
);

/** A page of an artifact's live links (`allOf` Pagination and its items, as the other lists). */
export const LinkList = Type.Intersect(
  [
    Type.Ref(Pagination),
    Type.Object({ links: Type.Array(Type.Ref(ListedLink), { description: 'Unexpired links, newest first.' }) }),
  ],
  { $id: 'LinkList' },
);

export const LinkIdParams = Type.Object({
  link_id: Type.String({ description: 'A link id, lnk_…' }),
});

export const RevokeLinkResult = Type.Object(
  { link_id: Type.String(), revoked: Type.Literal(true) },
  { $id: 'RevokeLinkResult' },
);

export const CreateLinkBody = Type.Object(
  {
    expires_in: Type.Optional(
      // No schema default: it would be filled in beside a ttl. Neither given is 7 days.
      Type.Integer({
        minimum: 1,
        maximum: 2_592_000,
        examples: [259_200],
        description: 'Lifetime in seconds; default 604800 (7 days).',
      }),
    ),
    ttl: Type.Optional(
      Type.String({
        description: 'Lifetime as a duration (`s`, `m`, `h` or `d`), at most `30d`; instead of expires_in.',
        examples: ['3d', '12h'],
      }),
    ),
  },
  { $id: 'CreateLinkRequest', additionalProperties: false },
);

export const LinkRecord = Type.Object(
  {
    link_id: Type.String({ pattern: '^lnk_[A-Za-z0-9]{20}$' }),
    url: Type.String(),
    artifact_id: Type.String(),
    expires_at: Timestamp,
    created_at: Timestamp,
  },
  { $id: 'Link' },
);

export const DeleteResult = Type.Object(
  {
    artifact_id: Type.String(),
    deleted: Type.Literal(true),
    deleted_at: Timestamp,
  },
  { $id: 'DeleteResult' },
);

export const SealResult = Type.Object(
  {
    session_id: Type.String(),
    status: Type.Literal('sealed'),
    sealed_at: Timestamp,
    artifact_count: Type.Integer(),
  },
  { $id: 'SealResult' },
);

export const WhoAmI = Type.Object(
  {
    tenant_name: Type.String(),
    plan: Type.Union([Type.Literal('free'), Type.Literal('pro')]),
    api_key_last_4: Type.String(),
    usage_storage_bytes: Type.Integer(),
    plan_storage_limit_bytes: Type.Integer(),
    usage_requests_month: Type.Integer(),
    plan_requests_limit_month: Type.Integer(),
    active_links: Type.Integer(),
    max_active_links: Type.Integer(),
    rate_limit_sustained: Type.Integer({ description: 'Requests per second, sustained.' }),
    rate_limit_burst: Type.Integer({ description: 'Requests a burst may hold.' }),
    usage_storage_bytes_remaining: Type.Integer({ description: 'plan_storage_limit_bytes - usage_storage_bytes.' }),
    usage_requests_remaining_month: Type.Integer({
      description: 'plan_requests_limit_month - usage_requests_month (0 when used up).',
    }),
    requests_month_resets_at: Type.String({
      ...Timestamp,
      description: 'When the monthly request count starts again: the first instant of the next UTC month.',
    }),
    rate_limit_unit: Type.Literal('requests_per_second', { description: 'The unit of rate_limit_sustained.' }),
  },
  { $id: 'WhoAmI' },
);

export const Health = Type.Object({ status: Type.Literal('ok') }, { $id: 'Health' });

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

export const PublishBody = Type.Object(
  {
    visibility: Type.Union([Type.Literal('unlisted'), Type.Literal('public')], {
      description: '`public` currently behaves like `unlisted`.',
    }),
    access: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('password')], { default: 'none' })),
    title: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    password: Type.Optional(
      Type.String({ description: 'Required with access=password (Pro only; refused for HTML). Hashed with Argon2id.' }),
    ),
  },
  { $id: 'PublishRequest' },
);

export const PublishResult = Type.Object(
  {
    page_id: Type.String({ pattern: '^pg_[A-Za-z0-9]{16}$' }),
    public_url: Type.String(),
    visibility: Type.Union([Type.Literal('unlisted'), Type.Literal('public')]),
    access: Type.Union([Type.Literal('none'), Type.Literal('password')]),
  },
  { $id: 'PublishResult' },
);

export const UnpublishResult = Type.Object(
  { page_id: Type.String(), unpublished: Type.Literal(true) },
  { $id: 'UnpublishResult' },
);

export const SlugParams = Type.Object({ slug: Type.String({ description: 'A page slug, pg_…' }) });

export const GateInfo = Type.Object(
  { exists: Type.Literal(true), access: Type.Literal('password') },
  { $id: 'GateInfo' },
);

export const UnlockBody = Type.Object(
  { password: Type.String() },
  { $id: 'UnlockRequest', additionalProperties: false },
);

export const UnlockResult = Type.Object(
  {
    content_token: Type.String({ description: 'For `{content}/c/<slug>?token=…`.' }),
    expires_in: Type.Integer({ description: 'Seconds the token stays valid.' }),
  },
  { $id: 'UnlockResult' },
);

export const ReportBody = Type.Object(
  {
    reason: Type.Optional(
      Type.Unknown({ description: 'spam, phishing, malware, abuse, copyright or other (anything else: other).' }),
    ),
    detail: Type.Optional(Type.Unknown({ description: 'Free text, cut at 2,000 characters.' })),
  },
  { $id: 'PageReport', additionalProperties: true },
);

export const ReportReceipt = Type.Object({ received: Type.Literal(true) }, { $id: 'ReportReceipt' });

export const UploadUrlBody = Type.Object(
  {
    filename: Type.String({ minLength: 1 }),
    size_bytes: Type.Integer({
      minimum: 1,
      maximum: 5 * 1024 ** 3,
      description: 'Exact size of the file, at most 5 GiB.',
    }),
    content_type: Type.Optional(Type.String()),
    session_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    agent_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    ttl: Type.Optional(Type.String()),
    transcript: Type.Optional(Type.Boolean()),
  },
  { $id: 'UploadUrlRequest', additionalProperties: false },
);

export const UploadTicket = Type.Object(
  {
    artifact_id: Type.String(),
    status: Type.Literal('pending'),
    upload_url: Type.String(),
    upload_expires_at: Type.String({ format: 'date-time' }),
    upload_method: Type.Literal('PUT'),
    upload_headers: Type.Record(Type.String(), Type.String()),
  },
  { $id: 'UploadTicket' },
);

export const UploadReceipt = Type.Object(
  { artifact_id: Type.String(), size_bytes: Type.Integer() },
  { $id: 'UploadReceipt' },
);

/** The named request shapes: the ones a route validator may meet behind a `Type.Ref`. */
export const requestComponents: TSchema[] = [
  JsonUploadBody,
  MultipartUploadBody,
  UploadUrlBody,
  CreateLinkBody,
  BatchDownloadUrlsBody,
  PublishBody,
  UnlockBody,
  ReportBody,
];

/** Every named component: registered once on the API app, listed in the OpenAPI document. */
export const components: TSchema[] = [
  ErrorEnvelope,
  Pagination,
  ArtifactRecord,
  ArtifactList,
  SessionRecord,
  SessionList,
  ...requestComponents,
  UploadTicket,
  UploadReceipt,
  DownloadUrl,
  BatchDownloadUrls,
  LinkRecord,
  ListedLink,
  LinkList,
  RevokeLinkResult,
  DeleteResult,
  SealResult,
  PublishResult,
  UnpublishResult,
  GateInfo,
  UnlockResult,
  ReportReceipt,
  WhoAmI,
  Health,
];
