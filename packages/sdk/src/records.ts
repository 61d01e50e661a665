/**
 * The records the API answers, as plain types (snake_case, exactly the wire JSON). The server
 * declares the same shapes as TypeBox schemas (cairn-store's `src/wire`), which validate requests
 * and make the OpenAPI document; `test/types/sdk-records.ts` there checks that every record here
 * is the same type as its schema's, both ways, so neither can change alone. Written out rather
 * than derived so that this package needs nothing at run time or in its type declarations.
 */

/** An RFC 3339 UTC timestamp with milliseconds, e.g. `2026-11-22T08:00:00.000Z`. */
type Timestamp = string;

/** The page fields of every keyset-paginated list. */
export interface Pagination {
  /** Pass as `cursor` for the next page; null on the last. */
  next_cursor: string | null;
  has_more: boolean;
}

/** An artifact's public page, as its record shows it (null: not published). */
export interface PageSummary {
  public_url: string;
  visibility: 'unlisted' | 'public';
}

/** The artifact record. */
export interface ArtifactRecord {
  /** `art_` + 16 letters and digits. */
  artifact_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  /** Hex SHA-256 of the bytes. */
  content_hash: string;
  metadata: Record<string, unknown>;
  session_id: string | null;
  agent_id: string | null;
  created_at: Timestamp;
  /** null when it never expires. */
  expires_at: Timestamp | null;
  /** The live page, on a single GET; always null in lists. */
  page: PageSummary | null;
  /**
   * Only on a pending artifact, which only its owner's GET shows (a presigned or resumable upload
   * not completed yet): absent once it is stored.
   */
  status?: 'pending';
  /** Only with `status: "pending"`: when the reservation is released unless the upload is completed. */
  held_until?: Timestamp;
}

export interface ArtifactList extends Pagination {
  artifacts: ArtifactRecord[];
}

export interface DeleteResult {
  artifact_id: string;
  deleted: true;
  deleted_at: Timestamp;
}

/** A presigned upload's reservation (`POST /v1/artifacts/upload-url`). */
export interface UploadTicket {
  artifact_id: string;
  status: 'pending';
  upload_url: string;
  upload_expires_at: Timestamp;
  upload_method: 'PUT';
  upload_headers: Record<string, string>;
}

export interface SessionRecord {
  session_id: string;
  artifact_count: number;
  is_sealed: boolean;
  sealed_at: Timestamp | null;
  first_artifact_at: Timestamp;
  last_artifact_at: Timestamp;
}

export interface SessionList extends Pagination {
  sessions: SessionRecord[];
}

export interface SealResult {
  session_id: string;
  status: 'sealed';
  sealed_at: Timestamp;
  artifact_count: number;
}

/** A private signed download URL (one hour) and what it serves. */
export interface DownloadUrl {
  download_url: string;
  /** Seconds the URL stays valid. */
  expires_in: number;
  filename: string;
  content_type: string;
  size_bytes: number;
}

/**
 * One item of a batch of download URLs: the URL, or the error this id alone would have got
 * (`artifact_not_found`, `artifact_already_deleted`, `artifact_expired`).
 */
export type BatchDownloadUrl =
  | {
      artifact_id: string;
      download_url: string;
      expires_in: number;
      filename: string;
      content_type: string;
      size_bytes: number;
    }
  | { artifact_id: string; error: { code: string; message: string; status: number } };

export interface BatchDownloadUrls {
  /** One item per requested id, in request order. */
  download_urls: BatchDownloadUrl[];
}

/** A signed URL (one hour) of an archive of artifacts: a session, or a list query's matches. */
export interface ArchiveUrl {
  archive_url: string;
  /** Seconds the URL stays valid. */
  expires_in: number;
  format: 'zip' | 'tar.gz';
  /** The name it downloads under, e.g. `run-42.zip`. */
  filename: string;
  /** Artifacts it holds (beside manifest.json). */
  artifact_count: number;
  /** Their bytes together. */
  size_bytes: number;
}

/** A link to a sealed session: its viewer page (`url`) and its archive (`archive_url`). */
export interface SessionLinkRecord {
  link_id: string;
  /** The link's page on the viewer origin: the files, their sizes and "download all". */
  url: string;
  /** The archive on the download origin (zip; append `?format=tar.gz` for tar.gz). */
  archive_url: string;
  /** On creation. */
  session_id?: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

export interface SessionLinkList extends Pagination {
  links: SessionLinkRecord[];
}

/** A new download link. */
export interface LinkRecord {
  /** `lnk_` + 20 letters and digits. */
  link_id: string;
  url: string;
  artifact_id: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

/** A live link as the list shows it (the list is of one artifact, so no `artifact_id`). */
export interface ListedLink {
  link_id: string;
  /** The shareable download URL. */
  url: string;
  expires_at: Timestamp;
  created_at: Timestamp;
}

export interface LinkList extends Pagination {
  /** Unexpired links, newest first. */
  links: ListedLink[];
}

export interface RevokeLinkResult {
  link_id: string;
  revoked: true;
}

export interface PublishResult {
  /** `pg_` + 16 letters and digits. */
  page_id: string;
  public_url: string;
  visibility: 'unlisted' | 'public';
  access: 'none' | 'password';
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
  /** For `{content}/c/<slug>?token=…`. */
  content_token: string;
  /** Seconds the token stays valid. */
  expires_in: number;
}

/** `GET /v1/whoami`: the spec's eleven fields and what is left. */
export interface WhoAmI {
  tenant_name: string;
  plan: 'free' | 'pro';
  api_key_last_4: string;
  usage_storage_bytes: number;
  plan_storage_limit_bytes: number;
  usage_requests_month: number;
  plan_requests_limit_month: number;
  active_links: number;
  max_active_links: number;
  /** Requests per second, sustained. */
  rate_limit_sustained: number;
  /** Requests a burst may hold. */
  rate_limit_burst: number;
  /** plan_storage_limit_bytes - usage_storage_bytes. */
  usage_storage_bytes_remaining: number;
  /** plan_requests_limit_month - usage_requests_month (0 when used up). */
  usage_requests_remaining_month: number;
  /** When the monthly request count starts again: the first instant of the next UTC month. */
  requests_month_resets_at: Timestamp;
  /** The unit of rate_limit_sustained. */
  rate_limit_unit: 'requests_per_second';
}

/** The kinds of event of the change feed. */
export type EventType =
  | 'artifact.created'
  | 'artifact.deleted'
  | 'artifact.expired'
  | 'artifact.purged'
  | 'session.sealed'
  | 'page.published'
  | 'page.updated'
  | 'page.unpublished'
  | 'page.taken_down'
  | 'link.created'
  | 'link.revoked'
  | 'session_link.created'
  | 'session_link.revoked'
  | 'webhook.disabled';

/** A page as its events show it. */
export interface PageState {
  page_id: string;
  artifact_id: string;
  public_url: string;
  visibility: 'unlisted' | 'public';
  access: 'none' | 'password';
  title: string | null;
  /** Whether the page is served now. */
  live: boolean;
  /** Whether an operator took it down. */
  taken_down: boolean;
}

/** What a `webhook.disabled` event carries. */
export interface WebhookDisabled {
  webhook_id: string;
  url: string;
  disabled_at: Timestamp;
  reason: string;
}

/** One event of the change feed: what changed, with the record it concerns as it was after the change. */
export interface EventRecord {
  /** `evt_` + 16 digits: ids sort in the order the changes were made. */
  event_id: string;
  type: EventType;
  created_at: Timestamp;
  data: ArtifactRecord | SessionRecord | PageState | LinkRecord | SessionLinkRecord | WebhookDisabled;
}

export interface EventList extends Pagination {
  /** Oldest first. */
  events: EventRecord[];
}

/** A webhook endpoint (its secret is shown only when made or rotated). */
export interface WebhookRecord {
  /** `wh_` + 16 letters and digits. */
  webhook_id: string;
  url: string;
  /** null: every type. */
  types: EventType[] | null;
  session_id: string | null;
  status: 'active' | 'disabled';
  created_at: Timestamp;
  disabled_at: Timestamp | null;
  failing_since: Timestamp | null;
  /** The last event delivered (or passed over by the filters); null before the first. */
  last_event_id: string | null;
}

export interface WebhookCreated extends WebhookRecord {
  /** `whsec_…`: verify deliveries with it (Standard Webhooks). */
  secret: string;
}

export interface WebhookList extends Pagination {
  webhooks: WebhookRecord[];
}

export interface WebhookSecret {
  webhook_id: string;
  secret: string;
}

export interface DeleteWebhookResult {
  webhook_id: string;
  deleted: true;
}

/** One delivery attempt of an event to a webhook. */
export interface DeliveryRecord {
  delivery_id: string;
  event_id: string;
  event_type: EventType;
  attempt: number;
  delivered: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: Timestamp;
}

export interface DeliveryList extends Pagination {
  deliveries: DeliveryRecord[];
}
