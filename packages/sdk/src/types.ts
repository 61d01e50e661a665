import type { Readable } from 'node:stream';
import type * as wire from './records.js';

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
  /**
   * A fetch for every call without a streamed body (tests, instrumentation, a proxy agent).
   * Default: Node's own http/https, which spares a process the cost of loading fetch.
   */
  fetch?: typeof fetch;
}

// ---- wire records: snake_case, as the API answers them (records.ts) ----

export type {
  ArchiveUrl,
  ArtifactList,
  ArtifactRecord,
  BatchDownloadUrl,
  BatchDownloadUrls,
  DeleteWebhookResult,
  DeliveryList,
  DeliveryRecord,
  DownloadUrl,
  EventList,
  EventRecord,
  EventType,
  GateInfo,
  LinkList,
  LinkRecord,
  ListedLink,
  PageState,
  PublishResult,
  RevokeLinkResult,
  SealResult,
  SessionLinkList,
  SessionLinkRecord,
  SessionList,
  SessionRecord,
  UnlockResult,
  UnpublishResult,
  UploadTicket,
  WebhookCreated,
  WebhookDisabled,
  WebhookList,
  WebhookRecord,
  WebhookSecret,
} from './records.js';

/** WhoAmI's additive fields: an older Cairn, or the hosted service, omits them. */
type WhoAmIAdditions =
  | 'usage_storage_bytes_remaining'
  | 'usage_requests_remaining_month'
  | 'requests_month_resets_at'
  | 'rate_limit_unit';
export interface WhoAmI extends Omit<wire.WhoAmI, WhoAmIAdditions>, Partial<Pick<wire.WhoAmI, WhoAmIAdditions>> {}

/** An artifact's public page, as its record shows it. */
export type PageRef = wire.PageSummary;

export interface DeleteResult extends Omit<wire.DeleteResult, 'deleted_at'> {
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

/** `uploadResumable`: the usual upload options, plus where to pick an earlier upload up. */
export interface ResumableUploadOptions extends UploadOptions {
  /**
   * An upload URL from an earlier call's `onUploadUrl`: the bytes go on from the server's offset.
   * One the server no longer knows (expired after 24 h, terminated) starts a new upload.
   */
  uploadUrl?: string;
  /**
   * Called with the URL of a newly created upload before any byte is sent (awaited), so a caller
   * can keep it and resume after a crash. Not called when `uploadUrl` is picked up as it is.
   */
  onUploadUrl?: (uploadUrl: string) => void | Promise<void>;
  /**
   * At most this many bytes per PATCH (default: the rest of the file in one). A connection that
   * drops keeps what arrived either way; a server that crashes mid-PATCH loses that PATCH's bytes,
   * so pieces bound what a crash costs, at one request (counted like any call) each.
   */
  chunkSize?: number;
}

/** What the server's tus endpoint offers (`OPTIONS /v1/uploads/tus`). */
export interface ResumableSupport {
  version: '1.0.0';
  /** `Tus-Extension`: creation, creation-with-upload, termination, expiration, checksum. */
  extensions: string[];
  /** `Tus-Max-Size` in bytes, when the server says. */
  maxSize: number | null;
  checksumAlgorithms: string[];
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
  /**
   * A repeat with the same key within 24 hours answers the same pending artifact (with a fresh
   * URL) instead of reserving another; with a key the call is retried on 5xx and network errors.
   */
  idempotencyKey?: string;
  /** Called once the reservation is answered: `replayed` when the key answered an earlier one. */
  onResponse?: (info: UploadResponseInfo) => void;
}

export interface PublishOptions {
  /** Default 'unlisted' (also when publishing again: the page's settings are replaced, not merged). */
  visibility?: 'unlisted' | 'public';
  /** Default 'password' when `password` is given, else 'none'. */
  access?: 'none' | 'password';
  title?: string;
  password?: string;
}

/** The two archive formats: zip (entries stored, exact length) or tar.gz. */
export type ArchiveFormat = 'zip' | 'tar.gz';
