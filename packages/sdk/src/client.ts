import { CairnError } from './errors.js';
import type { FollowEventsOptions } from './events.js';
import { walkPages } from './iterate.js';
import { artifactsQuery, sessionsQuery } from './query.js';
import { lacksTranscriptModels, scanTranscriptFile, scanTranscriptText, withTranscriptModels } from './transcript.js';
import { type Call, followedUncertainAttempt, Transport } from './transport.js';
import type {
  ArchiveFormat,
  ArchiveUrl,
  ArtifactList,
  ArtifactRecord,
  BatchDownloadUrls,
  CairnClientOptions,
  DeleteResult,
  DeleteWebhookResult,
  DeliveryList,
  DownloadResult,
  DownloadToFileOptions,
  DownloadUrl,
  EventList,
  EventRecord,
  GateInfo,
  LinkList,
  LinkRecord,
  ListArtifactsQuery,
  ListedLink,
  ListLinksQuery,
  ListSessionsQuery,
  ProgressFn,
  PublishOptions,
  PublishResult,
  RequestUploadUrlInput,
  ResumableSupport,
  ResumableUploadOptions,
  RevokeLinkResult,
  SealResult,
  SessionLinkList,
  SessionLinkRecord,
  SessionList,
  SessionRecord,
  StreamBody,
  UnlockResult,
  UnpublishResult,
  UploadBytesOptions,
  UploadOptions,
  UploadStreamOptions,
  UploadTicket,
  WebhookCreated,
  WebhookList,
  WebhookRecord,
  WebhookSecret,
  WhoAmI,
} from './types.js';
import { CAIRN_VERSION } from './version.js';
import { uploadWireFields } from './wire-fields.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
/**
 * `complete` reads the whole uploaded file (up to 5 GiB) to hash it, then has storage copy it:
 * minutes, not seconds, for the largest files. A shorter timeout would abandon (and the retry
 * repeat) work that was about to finish.
 */
export const COMPLETE_TIMEOUT_MS = 15 * 60_000;

const seg = encodeURIComponent;

// The modules of uploads and downloads, loaded by the first call that needs them: a process that
// only lists or reads records (a CLI command, an MCP server answering a question) never loads them.
const uploads = () => import('./uploads.js');
const resumable = () => import('./resumable.js');
const events = () => import('./events.js');

/** The filters of `GET /v1/events`. */
export interface ListEventsQuery {
  /** Only events after this event id. */
  after?: string;
  cursor?: string;
  limit?: number;
  /** Event types or prefixes (`artifact.*`). */
  types?: string[];
  sessionId?: string;
}

const eventsQuery = (q: ListEventsQuery) => ({
  after: q.after,
  cursor: q.cursor,
  limit: q.limit === undefined ? undefined : String(q.limit),
  types: q.types?.join(','),
  session_id: q.sessionId,
});

/** The Cairn API from TypeScript: wire records as-is (snake_case), options in camelCase. */
export class CairnClient {
  private readonly http: Transport;

  constructor(opts: CairnClientOptions) {
    if (!opts || typeof opts.apiKey !== 'string' || opts.apiKey === '') {
      throw new TypeError('CairnClient needs an apiKey (ak_live_…).');
    }
    this.http = new Transport({
      apiKey: opts.apiKey,
      baseUrl: (opts.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, ''),
      maxRetries: Math.max(0, opts.maxRetries ?? 3),
      timeoutMs: opts.timeoutMs ?? 60_000,
      userAgent: opts.userAgent ?? `cairn-sdk-typescript/${CAIRN_VERSION} node/${process.versions.node}`,
      fetch: opts.fetch,
    });
  }

  /** The base URL this client talks to, without a trailing slash. */
  get baseUrl(): string {
    return this.http.config.baseUrl;
  }

  private get<T>(path: string, query?: Call['query'], auth = true): Promise<T> {
    return this.http.json<T>({ method: 'GET', path, query, auth, idempotent: true });
  }

  health(): Promise<{ status: 'ok' }> {
    return this.get('/health', undefined, false);
  }

  whoami(): Promise<WhoAmI> {
    return this.get('/v1/whoami');
  }

  /** The OpenAPI 3.1 document of the API (`GET /v1/openapi.json`, no key needed). */
  openapi(): Promise<Record<string, unknown>> {
    return this.get('/v1/openapi.json', undefined, false);
  }

  // ---- uploads ----

  /** Multipart, streamed from disk; retried (file re-opened) on 5xx/network only with an idempotencyKey. */
  async uploadFile(path: string, opts: UploadOptions = {}): Promise<ArtifactRecord> {
    const { fileMultipart } = await uploads();
    const sent = await withModelsOfFile(path, opts);
    return this.upload({ stream: await fileMultipart(path, sent) }, sent);
  }

  /**
   * Resumable (tus 1.0.0, `/v1/uploads/tus`), streamed from disk: creates the upload (or picks up
   * `opts.uploadUrl`), PATCHes the file from the server's offset, and after a dropped connection,
   * 5xx, 409 or 429 asks the server's offset (HEAD) and goes on from there. Resolves with the
   * artifact (`GET /v1/artifacts/{id}`). `onUploadUrl` gets the URL to keep for a later resume.
   */
  async uploadResumable(path: string, opts: ResumableUploadOptions = {}): Promise<ArtifactRecord> {
    return (await resumable()).uploadResumable(this.http, path, await withModelsOfFile(path, opts));
  }

  /** The server's tus endpoint (`OPTIONS /v1/uploads/tus`), or null on a Cairn without one (404). */
  async resumableUploadSupport(): Promise<ResumableSupport | null> {
    return (await resumable()).resumableSupport(this.http);
  }

  /** Abandons a resumable upload (tus termination): its bytes go. One already gone is no error. */
  async terminateResumableUpload(uploadUrl: string): Promise<void> {
    return (await resumable()).terminateResumable(this.http, uploadUrl);
  }

  /** Multipart, streamed from the caller's stream; never retried (the stream can be read once). */
  async uploadStream(body: StreamBody, opts: UploadStreamOptions): Promise<ArtifactRecord> {
    const { streamMultipart } = await uploads();
    return this.upload({ stream: streamMultipart(body, opts) }, opts);
  }

  /** JSON body with base64 content (the server takes up to 10 MiB, 10,485,760 bytes, decoded). */
  async uploadBytes(content: Uint8Array | string, opts: UploadBytesOptions): Promise<ArtifactRecord> {
    if (opts.transcript && lacksTranscriptModels(opts.metadata)) {
      const text = typeof content === 'string' ? content : Buffer.from(content).toString('utf8');
      opts = { ...opts, metadata: withTranscriptModels(opts.metadata, scanTranscriptText(text)) };
    }
    const body = (await uploads()).jsonUploadBody(content, opts);
    const size = Buffer.byteLength(body.content, 'base64');
    opts.onProgress?.(0, size);
    return this.upload({ json: body }, opts).then((record) => {
      opts.onProgress?.(size, size);
      return record;
    });
  }

  /**
   * A session transcript from disk (`transcript: true`, so `metadata.type=transcript`). When its
   * format is recognised (Claude Code JSONL, OpenAI-shaped messages) the metadata gets `model`
   * (the last model seen), `model_source: "transcript"` and `models_used` (every distinct model,
   * comma-separated, in order of first use), never over keys the caller set; a `model` the caller
   * set wins, and `model_source` is then left unset.
   */
  async uploadTranscriptFile(path: string, opts: UploadOptions = {}): Promise<ArtifactRecord> {
    return this.uploadFile(path, { ...opts, transcript: true });
  }

  /**
   * A transcript from memory: NDJSON text or bytes, or a list of records (written as NDJSON).
   * Metadata as for uploadTranscriptFile. Sent as one JSON body (the server takes up to 10 MiB, 10,485,760 bytes).
   */
  uploadTranscript(
    content: string | Uint8Array | readonly unknown[],
    opts: UploadOptions & { filename?: string } = {},
  ): Promise<ArtifactRecord> {
    const text =
      typeof content === 'string'
        ? content
        : content instanceof Uint8Array
          ? Buffer.from(content).toString('utf8')
          : content.map((r) => `${JSON.stringify(r)}\n`).join('');
    const filename = opts.filename ?? 'transcript.ndjson';
    const body = content instanceof Uint8Array ? content : text;
    return this.uploadBytes(body, { ...opts, filename, transcript: true });
  }

  /** `POST /v1/artifacts`: retried on 5xx/network only with an idempotency key; reports replays. */
  private async upload(body: Pick<Call, 'stream' | 'json'>, opts: UploadOptions): Promise<ArtifactRecord> {
    const { body: record, headers } = await this.http.jsonWithHeaders<ArtifactRecord>({
      method: 'POST',
      path: '/v1/artifacts',
      ...body,
      headers: opts.idempotencyKey === undefined ? undefined : { 'idempotency-key': opts.idempotencyKey },
      idempotent: opts.idempotencyKey !== undefined,
    });
    opts.onResponse?.({ replayed: headers.get('idempotent-replayed') === 'true' });
    return record;
  }

  // ---- artifacts ----

  getArtifact(id: string): Promise<ArtifactRecord> {
    return this.get(`/v1/artifacts/${seg(id)}`);
  }

  listArtifacts(q: ListArtifactsQuery = {}): Promise<ArtifactList> {
    return this.get('/v1/artifacts', artifactsQuery(q));
  }

  /** Every artifact matching `q`, newest first, fetching pages of `q.limit` as it goes. */
  iterateArtifacts(q: ListArtifactsQuery = {}): AsyncIterable<ArtifactRecord> {
    return walkPages(
      (cursor) => this.listArtifacts({ ...q, cursor }),
      (page) => page.artifacts,
      q.cursor,
    );
  }

  /**
   * Soft-deletes. When a retry (after a 5xx or network error, whose attempt may have deleted it)
   * meets `artifact_already_deleted`, that is this call's own success: it resolves with
   * `{ artifact_id, deleted: true, deleted_at: null, already_deleted: true }` instead of throwing.
   */
  async deleteArtifact(id: string): Promise<DeleteResult> {
    try {
      return await this.http.json<DeleteResult>({
        method: 'DELETE',
        path: `/v1/artifacts/${seg(id)}`,
        idempotent: true,
      });
    } catch (err) {
      if (err instanceof CairnError && err.code === 'artifact_already_deleted' && followedUncertainAttempt(err)) {
        return { artifact_id: id, deleted: true, deleted_at: null, already_deleted: true };
      }
      throw err;
    }
  }

  getDownloadUrl(id: string): Promise<DownloadUrl> {
    return this.get(`/v1/artifacts/${seg(id)}/download-url`);
  }

  /**
   * Private download URLs for 1-20 artifacts in one call (one request against the rate limit and
   * quota). Ids that cannot be downloaded get an `error` item instead of failing the call.
   */
  downloadUrls(ids: readonly string[]): Promise<BatchDownloadUrls> {
    return this.http.json({
      method: 'POST',
      path: '/v1/artifacts/batch/download-urls',
      json: { artifact_ids: ids },
      // Signing URLs changes nothing, so a repeat is harmless.
      idempotent: true,
    });
  }

  /** The artifact's bytes as a stream, fetched from the signed URL (no API key goes to the content origin). */
  async download(id: string): Promise<DownloadResult> {
    const info = await this.getDownloadUrl(id);
    const { body } = await this.fetchSigned(info.download_url);
    return { body, sizeBytes: info.size_bytes, filename: info.filename, contentType: info.content_type };
  }

  /** Streams to a temporary file next to `path`, then renames it into place. */
  async downloadToFile(
    id: string,
    path: string,
    opts: DownloadToFileOptions = {},
  ): Promise<{ path: string; sizeBytes: number }> {
    const { body, sizeBytes } = await this.download(id);
    const { streamToFile } = await import('./downloads.js');
    const written = await streamToFile(body, path, sizeBytes, opts);
    return { path, sizeBytes: written };
  }

  /**
   * Lifetime as `expiresIn` seconds or a `ttl` duration (`'3d'`); default 7 days, at most 30.
   * Non-idempotent (each call makes a new link): never retried on 5xx or network errors.
   */
  createLink(id: string, opts: { expiresIn?: number; ttl?: string } = {}): Promise<LinkRecord> {
    const json: Record<string, unknown> = {};
    if (opts.expiresIn !== undefined) json.expires_in = opts.expiresIn;
    if (opts.ttl !== undefined) json.ttl = opts.ttl;
    return this.http.json({
      method: 'POST',
      path: `/v1/artifacts/${seg(id)}/links`,
      json,
      idempotent: false,
    });
  }

  /** The artifact's live links, newest first (one page; see `iterateLinks`). */
  listLinks(id: string, q: ListLinksQuery = {}): Promise<LinkList> {
    return this.get(`/v1/artifacts/${seg(id)}/links`, { cursor: q.cursor, limit: q.limit?.toString() });
  }

  iterateLinks(id: string, q: ListLinksQuery = {}): AsyncIterable<ListedLink> {
    return walkPages(
      (cursor) => this.listLinks(id, { ...q, cursor }),
      (page) => page.links,
      q.cursor,
    );
  }

  /** Revokes a link: its URL stops working at once. Idempotent, so retried like a GET. */
  revokeLink(linkId: string): Promise<RevokeLinkResult> {
    return this.http.json({ method: 'DELETE', path: `/v1/links/${seg(linkId)}`, idempotent: true });
  }

  // ---- presigned uploads (Pro) ----

  /**
   * Each call reserves a new artifact, so without `idempotencyKey` it is never retried on 5xx or
   * network errors; with one it is, and a repeat answers the same reservation.
   */
  async requestUploadUrl(input: RequestUploadUrlInput): Promise<UploadTicket> {
    const key = input.idempotencyKey;
    const { body, headers } = await this.http.jsonWithHeaders<UploadTicket>({
      method: 'POST',
      path: '/v1/artifacts/upload-url',
      json: { ...uploadWireFields(input), size_bytes: input.sizeBytes },
      headers: key === undefined ? undefined : { 'idempotency-key': key },
      idempotent: key !== undefined,
    });
    input.onResponse?.({ replayed: headers.get('idempotent-replayed') === 'true' });
    return body;
  }

  /** PUTs the file to the ticket's URL with its headers only (the URL itself is the credential). */
  async putUpload(ticket: UploadTicket, path: string, opts: { onProgress?: ProgressFn } = {}): Promise<void> {
    const headers = { ...ticket.upload_headers };
    const typeKey = Object.keys(headers).find((k) => k.toLowerCase() === 'content-type');
    const contentType = typeKey ? (headers[typeKey] as string) : 'application/octet-stream';
    if (typeKey) delete headers[typeKey];
    const res = await this.http.send({
      method: ticket.upload_method ?? 'PUT',
      path: ticket.upload_url,
      absolute: true,
      auth: false,
      headers,
      stream: await (await uploads()).fileBody(path, contentType, opts.onProgress),
      idempotent: true,
    });
    await res.body?.cancel();
  }

  /** Waits up to COMPLETE_TIMEOUT_MS (or the client's timeout, if longer): see there. */
  completeUpload(id: string): Promise<ArtifactRecord> {
    return this.http.json({
      method: 'POST',
      path: `/v1/artifacts/${seg(id)}/complete`,
      idempotent: true,
      minTimeoutMs: COMPLETE_TIMEOUT_MS,
    });
  }

  // ---- sessions ----

  listSessions(q: ListSessionsQuery = {}): Promise<SessionList> {
    return this.get('/v1/sessions', sessionsQuery(q));
  }

  iterateSessions(q: ListSessionsQuery = {}): AsyncIterable<SessionRecord> {
    return walkPages(
      (cursor) => this.listSessions({ ...q, cursor }),
      (page) => page.sessions,
      q.cursor,
    );
  }

  /**
   * A signed URL (one hour, no key needed) of the session's live artifacts as one archive, with
   * manifest.json; `format` zip (default) or tar.gz. The call counts as one request.
   */
  getSessionArchiveUrl(id: string, opts: { format?: ArchiveFormat } = {}): Promise<ArchiveUrl> {
    return this.http.json({
      method: 'GET',
      path: `/v1/sessions/${seg(id)}/archive`,
      query: { format: opts.format },
      idempotent: true,
      seeOther: true,
    });
  }

  /** The same for every artifact a list query matches (its filters; no cursor or limit). */
  getArchiveUrl(q: Omit<ListArtifactsQuery, 'cursor' | 'limit'> = {}, opts: { format?: ArchiveFormat } = {}) {
    return this.http.json<ArchiveUrl>({
      method: 'GET',
      path: '/v1/artifacts/archive',
      query: { ...artifactsQuery(q), format: opts.format },
      idempotent: true,
      seeOther: true,
    });
  }

  /**
   * Streams a session's archive into `path` (through a temporary file renamed into place, so a
   * failed download leaves nothing); `onProgress(bytes, total)` as it arrives (total known for zip).
   */
  async downloadSessionArchive(
    id: string,
    path: string,
    opts: DownloadToFileOptions & { format?: ArchiveFormat } = {},
  ): Promise<{ path: string; sizeBytes: number; archive: ArchiveUrl }> {
    const archive = await this.getSessionArchiveUrl(id, opts.format ? { format: opts.format } : {});
    return { ...(await this.archiveToFile(archive.archive_url, path, opts)), archive };
  }

  /** Streams an archive URL (of `getArchiveUrl`, `getSessionArchiveUrl` or a session link) into `path`. */
  async archiveToFile(url: string, path: string, opts: DownloadToFileOptions = {}) {
    const { body, length } = await this.fetchSigned(url);
    const { streamToFile } = await import('./downloads.js');
    const written = await streamToFile(body, path, length, opts);
    return { path, sizeBytes: written };
  }

  /** GETs a signed URL of the content origin (no API key goes there), its body as a stream. */
  private async fetchSigned(url: string): Promise<{ body: ReadableStream<Uint8Array>; length: number | null }> {
    const res = await this.http.send({
      method: 'GET',
      path: url,
      absolute: true,
      auth: false,
      idempotent: true,
      streamResponse: true,
    });
    if (!res.body)
      throw new CairnError({ code: 'invalid_response', message: 'Download had no body.', status: res.status });
    const length = res.headers.get('content-length');
    return { body: res.body, length: length === null ? null : Number(length) };
  }

  /**
   * A link anyone can open to a sealed session: its viewer page lists the files and downloads
   * them all. Lifetime, cap and revoke (`revokeLink`) as artifact links. Never retried.
   */
  createSessionLink(id: string, opts: { expiresIn?: number; ttl?: string } = {}): Promise<SessionLinkRecord> {
    const json: Record<string, unknown> = {};
    if (opts.expiresIn !== undefined) json.expires_in = opts.expiresIn;
    if (opts.ttl !== undefined) json.ttl = opts.ttl;
    return this.http.json({ method: 'POST', path: `/v1/sessions/${seg(id)}/links`, json, idempotent: false });
  }

  /** The session's live links, newest first (one page). */
  listSessionLinks(id: string, q: ListLinksQuery = {}): Promise<SessionLinkList> {
    return this.get(`/v1/sessions/${seg(id)}/links`, { cursor: q.cursor, limit: q.limit?.toString() });
  }

  sealSession(id: string): Promise<SealResult> {
    return this.http.json({ method: 'POST', path: `/v1/sessions/${seg(id)}/seal`, idempotent: true });
  }

  // ---- pages ----

  /**
   * Creates or updates the artifact's page (an upsert, so safe to retry). Publishing again
   * replaces title, visibility and access: pass the password again to keep a gate.
   */
  publish(id: string, opts: PublishOptions = {}): Promise<PublishResult> {
    return this.http.json({
      method: 'POST',
      path: `/v1/artifacts/${seg(id)}/publish`,
      json: {
        visibility: opts.visibility ?? 'unlisted',
        // A password means a gate: without this, the server would take the missing access as none.
        access: opts.access ?? (opts.password !== undefined ? 'password' : undefined),
        title: opts.title,
        password: opts.password,
      },
      idempotent: true,
    });
  }

  /** Takes the page down; `idOrSlug` is the artifact id (art_…) or the page slug (pg_…). */
  unpublish(idOrSlug: string): Promise<UnpublishResult> {
    return this.http.json({ method: 'DELETE', path: `/v1/artifacts/${seg(idOrSlug)}/publish`, idempotent: true });
  }

  gateInfo(slug: string): Promise<GateInfo> {
    return this.get(`/v1/public/pages/${seg(slug)}/gate-info`, undefined, false);
  }

  /** Not retried on 5xx: each attempt counts against the page's password-attempt cap. */
  unlock(slug: string, password: string): Promise<UnlockResult> {
    return this.http.json({
      method: 'POST',
      path: `/v1/public/pages/${seg(slug)}/unlock`,
      json: { password },
      auth: false,
      idempotent: false,
    });
  }

  report(slug: string, body: { reason?: string; detail?: string } = {}): Promise<{ received: true }> {
    return this.http.json({
      method: 'POST',
      path: `/v1/public/pages/${seg(slug)}/report`,
      json: body,
      auth: false,
      idempotent: false,
    });
  }

  // ---- the change feed ----

  /** A page of events, oldest first (`GET /v1/events`). */
  listEvents(q: ListEventsQuery = {}): Promise<EventList> {
    return this.get('/v1/events', eventsQuery(q));
  }

  /** Every event kept that matches, oldest first, page by page. */
  iterateEvents(q: ListEventsQuery = {}): AsyncIterable<EventRecord> {
    return walkPages(
      (cursor) => this.listEvents(cursor === undefined ? q : { ...q, after: undefined, cursor }),
      (page) => page.events,
    );
  }

  /**
   * The events as they happen (`GET /v1/events/stream`), for as long as you iterate; reconnects
   * by itself with Last-Event-ID, so none is missed or repeated. End it with `opts.signal`.
   */
  async *followEvents(opts: FollowEventsOptions = {}): AsyncGenerator<EventRecord> {
    yield* (await events()).followEvents(this.http, opts);
  }

  // ---- webhooks ----

  /** The secret (`whsec_…`) is in this answer only: keep it to verify deliveries (`verifyWebhook`). */
  createWebhook(input: { url: string; types?: string[]; sessionId?: string }): Promise<WebhookCreated> {
    return this.http.json({
      method: 'POST',
      path: '/v1/webhooks',
      json: { url: input.url, types: input.types, session_id: input.sessionId },
      // Each call makes a webhook: never repeated on its own.
      idempotent: false,
    });
  }

  listWebhooks(q: { cursor?: string; limit?: number } = {}): Promise<WebhookList> {
    return this.get('/v1/webhooks', { cursor: q.cursor, limit: q.limit === undefined ? undefined : String(q.limit) });
  }

  getWebhook(id: string): Promise<WebhookRecord> {
    return this.get(`/v1/webhooks/${seg(id)}`);
  }

  deleteWebhook(id: string): Promise<DeleteWebhookResult> {
    return this.http.json({ method: 'DELETE', path: `/v1/webhooks/${seg(id)}`, idempotent: true });
  }

  /** A new secret; deliveries carry the old one's signature too for 24 hours. */
  rotateWebhookSecret(id: string): Promise<WebhookSecret> {
    return this.http.json({ method: 'POST', path: `/v1/webhooks/${seg(id)}/rotate-secret`, idempotent: false });
  }

  /** A disabled webhook active again, from the event it stopped at. */
  enableWebhook(id: string): Promise<WebhookRecord> {
    return this.http.json({ method: 'POST', path: `/v1/webhooks/${seg(id)}/enable`, idempotent: true });
  }

  listWebhookDeliveries(id: string, q: { cursor?: string; limit?: number } = {}): Promise<DeliveryList> {
    return this.get(`/v1/webhooks/${seg(id)}/deliveries`, {
      cursor: q.cursor,
      limit: q.limit === undefined ? undefined : String(q.limit),
    });
  }
}

/**
 * `transcript: true` means the same on every upload: the models the transcript names are read
 * into the metadata (`model`, `model_source`, `models_used`), never over what the caller set.
 */
async function withModelsOfFile<T extends UploadOptions>(path: string, opts: T): Promise<T> {
  if (!opts.transcript || !lacksTranscriptModels(opts.metadata)) return opts;
  return { ...opts, metadata: withTranscriptModels(opts.metadata, await scanTranscriptFile(path)) };
}
