import type { ArtifactRow, PageRow, SessionRow, TenantRow } from './metadata-records.js';

/**
 * Artifacts and what writing or reading one involves: the blob bookkeeping that keeps their bytes
 * from being swept meanwhile, idempotent retries, presigned uploads (a `pending` row waiting for
 * its bytes), and the sessions artifacts are grouped in (a session row is written by the same
 * transaction as its artifacts).
 *
 * The rules every metadata port shares (each method atomic, timestamps in epoch milliseconds,
 * conflicts thrown as `CairnError`) are in metadata-store.ts.
 */

export interface IdempotentResponse {
  status: number;
  /** The original response body, as JSON text. */
  body: string;
}

/** A metadata filter: matches when the stored value is the string `value`, or a number/boolean whose JSON text is `value`. */
export interface MetadataMatch {
  key: string;
  value: string;
}

export interface KeysetCursor {
  createdAt: number;
  id: string;
}

export interface ArtifactQuery {
  /** Rows with `expiresAt <= now` are not returned. */
  now: number;
  /** Maximum rows to return. The core asks for one more than it shows, to know if more exist. */
  limit: number;
  /** Return rows strictly after this position in `createdAt DESC, id DESC` order. */
  after?: KeysetCursor;
  sessionId?: string;
  agentId?: string;
  filename?: string;
  contentType?: string;
  /** createdAt > createdAfter */
  createdAfter?: number;
  /** createdAt < createdBefore */
  createdBefore?: number;
  /** All must match (at most two: one caller filter plus `type=transcript`). */
  metadata?: MetadataMatch[];
}

export interface SessionQuery {
  limit: number;
  /** Return rows strictly after this position in `lastArtifactAt DESC, sessionId DESC` order. */
  after?: { lastArtifactAt: number; sessionId: string };
  /** firstArtifactAt > createdAfter */
  createdAfter?: number;
  /** firstArtifactAt < createdBefore */
  createdBefore?: number;
}

export interface InsertArtifactInput {
  /** Must have status `active` (or `pending` for a presigned upload). */
  artifact: ArtifactRow;
  /**
   * The tenant's storage limit. If the artifact's blob is not yet referenced by another active
   * artifact of the tenant, its size is added to `storageBytes`; when that would exceed this
   * limit nothing is written and `CairnError('quota_exceeded')` is thrown.
   * Ignored for `pending` rows (they are counted when they become active).
   */
  storageLimitBytes: number;
  /**
   * When given: if a record for (tenant, key) newer than `notBefore` exists, nothing is written
   * and its response is returned as a replay. Otherwise the record is written (replacing an older
   * one) in the same transaction as the artifact, so concurrent duplicates yield one artifact.
   */
  idempotency?: { key: string; notBefore: number; response: IdempotentResponse };
}

export type InsertArtifactResult =
  | { kind: 'created'; artifact: ArtifactRow }
  | { kind: 'replay'; response: IdempotentResponse };

export interface SoftDeleteResult {
  artifact: ArtifactRow;
  /** True for the call that moved the row from active to deleted; false when it already was not active. */
  deleted: boolean;
}

/** Who asks to write a blob's bytes (a token of the upload's own), and until when it may. */
export interface BlobWriter {
  owner: string;
  until: number;
}

/**
 * What a pin found. `write`: pinned, and the caller is the one writer of the bytes until its
 * `until` (they may be stored already: look before writing). `stored`: pinned, and an active
 * artifact references the bytes, so they are in the blob store; the caller writes nothing. The
 * other two change nothing and ask the caller to wait and pin again: `writing`, another upload
 * holds the write; `deleting`, a sweeper holds a delete claim.
 */
export type BlobPin = 'write' | 'stored' | 'writing' | 'deleting';

export interface ArtifactStore {
  // --- blobs (bookkeeping for content-addressed bytes) ---
  /**
   * Records that (tenant, hash) is about to be referenced, so no sweeper deletes it meanwhile
   * (inserts the blob row or clears its orphan mark), and gives `writer` the write of its bytes
   * when no artifact references them and no other writer's claim is still valid at `now`. So
   * two uploads of the same bytes, on any instance, never write them at once, and bytes that are
   * stored are never written again. The write ends when an active artifact comes to reference
   * the blob (insertArtifact, activateArtifact), at `writer.until`, or with releaseBlobWrite.
   */
  pinBlob(tenantId: string, contentHash: string, sizeBytes: number, now: number, writer: BlobWriter): Promise<BlobPin>;
  /** Gives up `owner`'s write of the blob (no effect when it holds none): another upload may write now. */
  releaseBlobWrite(tenantId: string, contentHash: string, owner: string): Promise<void>;
  /**
   * Whether an active artifact of the tenant references (tenant, hash), i.e. whether another
   * artifact with these bytes would cost no storage. Lets the core refuse an over-quota upload
   * before its bytes are written.
   */
  blobIsLive(tenantId: string, contentHash: string): Promise<boolean>;

  // --- artifacts ---
  /**
   * Inserts the artifact with everything that goes with it, atomically: idempotency record,
   * storage accounting (blob live references and `tenant.storageBytes`), and the session row
   * (created, or `artifactCount`/`first`/`lastArtifactAt` updated). Throws
   * `CairnError('session_sealed')` when the session is sealed and `quota_exceeded` as above.
   * The blob must have been pinned first.
   */
  insertArtifact(input: InsertArtifactInput): Promise<InsertArtifactResult>;
  /** Any status. Null when the tenant has no such artifact (another tenant's counts as none). */
  getArtifact(tenantId: string, id: string): Promise<ArtifactRow | null>;
  /** `getArtifact` and `getPageForArtifact` in one read (what GET of a record shows). */
  getArtifactWithPage(tenantId: string, id: string): Promise<{ artifact: ArtifactRow; page: PageRow | null } | null>;
  /** Any status, any tenant: for routes authorised by a signature rather than a key. */
  getArtifactAnyTenant(id: string): Promise<{ artifact: ArtifactRow; tenant: TenantRow } | null>;
  /** Active, unexpired artifacts matching every filter, `createdAt DESC, id DESC`. */
  listArtifacts(tenantId: string, query: ArtifactQuery): Promise<ArtifactRow[]>;
  /**
   * Active → deleted: sets `deletedAt`, drops the blob's live reference (and storage bytes when it
   * was the last), decrements the session's count, deletes the artifact's links and takes its page
   * offline (live=false). Returns the row after the call and `deleted: true` only for the one call
   * that made the change, decided by the store's own conditional write: of any number of concurrent
   * calls, on any number of instances, exactly one gets `true`. A row that is not active is returned
   * unchanged with `deleted: false`. Null when the tenant has no such artifact.
   */
  softDeleteArtifact(tenantId: string, id: string, now: number): Promise<SoftDeleteResult | null>;

  /** The stored response for (tenant, key) if it was recorded after `notBefore`; lets a retry skip re-sending bytes. */
  getIdempotency(tenantId: string, key: string, notBefore: number): Promise<IdempotentResponse | null>;

  // --- expiry: by the sweeper for every tenant, and by a request for its tenant before it reads usage ---
  /**
   * Active artifacts with `expiresAt <= now` → expired, with the same side effects as a soft delete;
   * at most `batch` in one transaction, returning how many (the sweeper repeats it until fewer come).
   * With `tenantId`, only that tenant's, and the figures read after it returns (storage, session
   * counts, links) count none of the rows it reports as done or finds due: a row another caller
   * is expiring at that moment is waited for, not skipped. A tenant with nothing due costs no write.
   */
  expireArtifacts(now: number, batch: number, tenantId?: string): Promise<number>;

  // --- presigned uploads: a `pending` row waits for its bytes, then `complete` activates it ---
  /** Records the hash and size of bytes that arrived for a pending artifact; false when it is not pending. */
  setPendingContent(tenantId: string, id: string, contentHash: string, sizeBytes: number): Promise<boolean>;
  /**
   * pending → active, with everything `insertArtifact` does for an active row (storage accounting
   * against `storageLimitBytes`, session row, metadata index) in one transaction. Throws
   * `quota_exceeded` / `session_sealed` like insertArtifact. Returns the row after the change; a
   * row that is not pending is returned unchanged. Null when the tenant has no such artifact.
   */
  activateArtifact(tenantId: string, id: string, storageLimitBytes: number, now: number): Promise<ArtifactRow | null>;
  /**
   * Removes a pending row of the tenant for good, as purgePendingUploads does an abandoned one (a
   * terminated resumable upload's, which nobody may see or complete any more). False when the
   * tenant has no pending row of that id (none, another status, another tenant's).
   */
  dropPending(tenantId: string, id: string): Promise<boolean>;

  // --- sessions ---
  getSession(tenantId: string, sessionId: string): Promise<SessionRow | null>;
  listSessions(tenantId: string, query: SessionQuery): Promise<SessionRow[]>;
  /** Sets `sealedAt` unless already set; returns the row, or null when the session is unknown. */
  sealSession(tenantId: string, sessionId: string, now: number): Promise<SessionRow | null>;
}
