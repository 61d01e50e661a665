import type { Readable } from 'node:stream';

/** Options of a CairnClient. */
export interface CairnClientOptions {
  apiKey: string;
  /** Default 'http://127.0.0.1:8080'; a trailing slash is ignored. */
  baseUrl?: string;
  /** Default 3 (429 honouring Retry-After; 5xx/network only for idempotent calls). */
  maxRetries?: number;
  /** Per request, default 60_000 (not applied to streaming bodies). */
  timeoutMs?: number;
  userAgent?: string;
  /** Injectable for tests; default global fetch (undici). */
  fetch?: typeof fetch;
}

// ---- wire records: snake_case, exactly as docs/API.md ----

export interface PageRef {
  public_url: string;
  visibility: string;
}

export interface ArtifactRecord {
  artifact_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  content_hash: string;
  metadata: Record<string, unknown>;
  session_id: string | null;
  agent_id: string | null;
  created_at: string;
  expires_at: string | null;
  page: PageRef | null;
}

export interface ArtifactList {
  artifacts: ArtifactRecord[];
  next_cursor: string | null;
  has_more: boolean;
}

export interface SessionRecord {
  session_id: string;
  artifact_count: number;
  is_sealed: boolean;
  sealed_at: string | null;
  first_artifact_at: string;
  last_artifact_at: string;
}

export interface SessionList {
  sessions: SessionRecord[];
  next_cursor: string | null;
  has_more: boolean;
}

export interface WhoAmI {
  tenant_name: string;
  plan: string;
  api_key_last_4: string;
  usage_storage_bytes: number;
  plan_storage_limit_bytes: number;
  usage_requests_month: number;
  plan_requests_limit_month: number;
  active_links: number;
  max_active_links: number;
  rate_limit_sustained: number;
  rate_limit_burst: number;
  /** Additive fields (servers before 0.2 omit them). */
  usage_storage_bytes_remaining?: number;
  usage_requests_remaining_month?: number;
  requests_month_resets_at?: string;
  rate_limit_unit?: 'requests_per_second';
}

export interface DownloadUrl {
  download_url: string;
  expires_in: number;
  filename: string;
  content_type: string;
  size_bytes: number;
}

/**
 * One item of `downloadUrls`: the URL, or the error this id alone would have got
 * (`artifact_not_found`, `artifact_already_deleted`, `artifact_expired`).
 */
export type BatchDownloadUrl =
  | ({ artifact_id: string } & DownloadUrl)
  | { artifact_id: string; error: { code: string; message: string; status: number } };

export interface BatchDownloadUrls {
  /** One item per requested id, in request order. */
  download_urls: BatchDownloadUrl[];
}

export interface LinkRecord {
  link_id: string;
  url: string;
  artifact_id: string;
  expires_at: string;
  created_at: string;
}

/** A live link as `listLinks` shows it (the list is of one artifact). */
export type ListedLink = Omit<LinkRecord, 'artifact_id'>;

export interface LinkList {
  links: ListedLink[];
  next_cursor: string | null;
  has_more: boolean;
}

export interface ListLinksQuery {
  cursor?: string;
  limit?: number;
}

export interface RevokeLinkResult {
  link_id: string;
  revoked: true;
}

export interface DeleteResult {
  artifact_id: string;
  deleted: true;
  /** null only with `already_deleted`. */
  deleted_at: string | null;
  /**
   * Set (true) only when a retried DELETE found the artifact already deleted, most likely by this
   * call's own earlier attempt whose answer was lost; the API body never carries it.
   */
  already_deleted?: true;
}

export interface SealResult {
  session_id: string;
  status: 'sealed';
  sealed_at: string;
  artifact_count: number;
}

export interface UploadTicket {
  artifact_id: string;
  status: 'pending';
  upload_url: string;
  upload_expires_at: string;
  upload_method: 'PUT';
  upload_headers: Record<string, string>;
}

export interface PublishResult {
  page_id: string;
  public_url: string;
  visibility: string;
  access: string;
}

export interface UnpublishResult {
  page_id: string;
  unpublished: true;
}

export interface GateInfo {
  exists: true;
  access: 'password';
}

export interface UnlockResult {
  content_token: string;
  expires_in: number;
}

// ---- request options: camelCase ----

export type ProgressFn = (sentBytes: number, totalBytes: number | null) => void;

/** Common fields of every upload. */
export interface UploadOptions {
  /** Default: basename of the path. */
  filename?: string;
  contentType?: string;
  sessionId?: string;
  agentId?: string;
  metadata?: Record<string, unknown>;
  ttl?: string;
  transcript?: boolean;
  idempotencyKey?: string;
  onProgress?: ProgressFn;
  /** Called once the upload is answered: `replayed` when an Idempotency-Key replayed an earlier upload. */
  onResponse?: (info: UploadResponseInfo) => void;
}

export interface UploadResponseInfo {
  /** The server answered with `Idempotent-Replayed: true`: the record is the earlier upload's, as it was then. */
  replayed: boolean;
}

export type UploadStreamOptions = UploadOptions & { filename: string; size?: number };
export type UploadBytesOptions = UploadOptions & { filename: string };
export type StreamBody = Readable | ReadableStream<Uint8Array>;

export interface ListArtifactsQuery {
  cursor?: string;
  limit?: number;
  sessionId?: string;
  agentId?: string;
  filename?: string;
  contentType?: string;
  createdAfter?: string;
  createdBefore?: string;
  transcript?: boolean;
  /** At most one pair (the server rejects more). */
  metadata?: Record<string, string>;
}

export interface ListSessionsQuery {
  cursor?: string;
  limit?: number;
  createdAfter?: string;
  createdBefore?: string;
}

export interface DownloadResult {
  body: ReadableStream<Uint8Array>;
  sizeBytes: number;
  filename: string;
  contentType: string;
}

export interface DownloadToFileOptions {
  onProgress?: (received: number, total: number | null) => void;
}

export interface RequestUploadUrlInput {
  filename: string;
  sizeBytes: number;
  contentType?: string;
  sessionId?: string;
  agentId?: string;
  metadata?: Record<string, unknown>;
  ttl?: string;
}

export interface PublishOptions {
  /** Default 'unlisted' (also when publishing again: the page's settings are replaced, not merged). */
  visibility?: 'unlisted' | 'public';
  /** Default 'password' when `password` is given, else 'none'. */
  access?: 'none' | 'password';
  title?: string;
  password?: string;
}
