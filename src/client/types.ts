import type { Readable } from 'node:stream';
import type { PageSummary, DeleteResult as WireDeleteResult } from '../wire/index.js';

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

// ---- wire records: snake_case, the server's own schemas (src/wire) ----
// Types only: `import type` keeps TypeBox's runtime out of the SDK bundle.

export type {
  ArtifactList,
  ArtifactRecord,
  BatchDownloadUrl,
  BatchDownloadUrls,
  DownloadUrl,
  GateInfo,
  LinkList,
  LinkRecord,
  ListedLink,
  PublishResult,
  RevokeLinkResult,
  SealResult,
  SessionList,
  SessionRecord,
  UnlockResult,
  UnpublishResult,
  UploadTicket,
  WhoAmI,
} from '../wire/index.js';

/** An artifact's public page, as its record shows it. */
export type PageRef = NonNullable<PageSummary>;

export interface DeleteResult extends Omit<WireDeleteResult, 'deleted_at'> {
  /** null only with `already_deleted`. */
  deleted_at: string | null;
  /**
   * Set (true) only when a retried DELETE found the artifact already deleted, most likely by this
   * call's own earlier attempt whose answer was lost; the API body never carries it.
   */
  already_deleted?: true;
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

export interface ListLinksQuery {
  cursor?: string;
  limit?: number;
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
