import type { PlanName } from '../shared/plan-name.js';

/**
 * Records of tenants, keys, artifacts, sessions, links, pages and usage.
 *
 * Every method is one atomic unit of work: the adapter runs it in a transaction (or an equivalent
 * single statement), so concurrent callers, in one process or many, never see half of it.
 * Rules that need atomicity (quotas, sealed sessions, idempotency) are decided by the core and
 * passed in as parameters; the adapter only enforces them inside its transaction.
 *
 * All timestamps are integer milliseconds since the Unix epoch. Adapters may throw
 * `CairnError` for the conflicts named below; any other failure is a plain Error.
 */

export interface TenantRow {
  id: string;
  name: string;
  plan: PlanName;
  suspended: boolean;
  createdAt: number;
  /** Sum of sizes of distinct blobs referenced by at least one active artifact. */
  storageBytes: number;
}

export interface ApiKeyRow {
  id: string;
  tenantId: string;
  /** Hex SHA-256 of the full key; the key itself is never stored. */
  hash: string;
  last4: string;
  createdAt: number;
  revokedAt: number | null;
}

/** `pending` is a presigned upload waiting for its bytes; it is invisible to every read but complete. */
export type ArtifactStatus = 'active' | 'deleted' | 'expired' | 'pending';

export interface ArtifactRow {
  id: string;
  tenantId: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  contentHash: string;
  metadata: Record<string, unknown>;
  sessionId: string | null;
  agentId: string | null;
  createdAt: number;
  expiresAt: number | null;
  deletedAt: number | null;
  status: ArtifactStatus;
}

export interface SessionRow {
  tenantId: string;
  sessionId: string;
  /** Active artifacts that name this session. */
  artifactCount: number;
  sealedAt: number | null;
  firstArtifactAt: number;
  lastArtifactAt: number;
}

export interface LinkRow {
  id: string;
  tenantId: string;
  artifactId: string;
  createdAt: number;
  expiresAt: number;
}

export interface LinkQuery {
  now: number;
  limit: number;
  /** `[createdAt, id]` of the last link already returned. */
  after?: [number, string];
}

export interface PageRow {
  slug: string;
  tenantId: string;
  artifactId: string;
  visibility: 'unlisted' | 'public';
  access: 'none' | 'password';
  title: string | null;
  passwordHash: string | null;
  live: boolean;
  /** Set by an operator takedown: the page stays offline and its owner cannot publish it again until restored. */
  takenDownAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** What a publish writes; the store keeps `live`, `takenDownAt` and the timestamps. */
export type PageInput = Omit<PageRow, 'live' | 'takenDownAt' | 'createdAt' | 'updatedAt'>;

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

export interface ExpiredBatchResult {
  /** Artifacts moved from active to expired in this batch. */
  expired: number;
}

export interface BlobRef {
  tenantId: string;
  contentHash: string;
  /** The claim this sweeper holds; pass it back to `forgetBlob`. */
  claimedAt: number;
}

/** Schema versions before and after `migrate()`; the migrations applied are `from + 1 … to`. */
export interface MigrationResult {
  from: number;
  to: number;
}

/** Requests to add to one monthly counter (see `addRequests`). */
export interface RequestDelta {
  tenantId: string;
  month: string;
  n: number;
}

export interface MetadataStore {
  /**
   * Creates or upgrades the schema. Safe to call on every start and from several processes (each
   * migration is applied once). Rejects, changing nothing, when the schema is newer than this code.
   */
  migrate(): Promise<MigrationResult>;
  /** Resolves when the database answers a trivial query (readiness). */
  ping?(): Promise<void>;
  /** PostgreSQL's pool: connections open and idle, calls waiting for one, calls shed so far (metrics). */
  poolStats?(): { total: number; idle: number; waiting: number; shed: number };
  close(): Promise<void>;

  // --- settings (e.g. the signing secret shared by all instances) ---
  /** Returns the stored value of `name`, storing `value` first if there is none (first writer wins). */
  getOrSetSetting(name: string, value: string): Promise<string>;

  // --- tenants and keys ---
  /** Throws `CairnError('invalid_request')` when the name is taken. */
  createTenant(tenant: TenantRow): Promise<TenantRow>;
  getTenant(id: string): Promise<TenantRow | null>;
  getTenantByName(name: string): Promise<TenantRow | null>;
  listTenants(): Promise<TenantRow[]>;
  /** Returns the updated tenant, or null when unknown. */
  updateTenant(id: string, change: { plan?: PlanName; suspended?: boolean }): Promise<TenantRow | null>;
  /** Inserts the key unless the tenant already has `maxActive` unrevoked keys; says which happened. */
  createApiKey(key: ApiKeyRow, maxActive: number): Promise<boolean>;
  /** An unrevoked key with this hash and its tenant. */
  findApiKey(hash: string): Promise<{ key: ApiKeyRow; tenant: TenantRow } | null>;
  /** All keys of the tenant, revoked ones included, oldest first. */
  listApiKeys(tenantId: string): Promise<ApiKeyRow[]>;
  /** Revokes the tenant's key `keyId`; false when there is no such unrevoked key. */
  revokeApiKey(tenantId: string, keyId: string, now: number): Promise<boolean>;
  /**
   * A number that changes whenever what `findApiKey` answers may have changed: a key revoked, a
   * tenant's plan or suspension changed, by this store or by any other process on the same
   * database. Answered without a query (it is asked on every request, to decide whether a cached
   * key lookup still holds). `null` while the store cannot tell (nothing may be cached then).
   * A new key needs no change: only found keys are cached.
   */
  credentialsEpoch(): number | null;

  // --- blobs (bookkeeping for content-addressed bytes) ---
  /**
   * Records that (tenant, hash) is about to be referenced, so no sweeper deletes it meanwhile:
   * inserts the blob row or clears its orphan mark. Returns `deleting` (and changes nothing)
   * while a sweeper holds a delete claim on it; the caller waits and tries again.
   */
  pinBlob(tenantId: string, contentHash: string, sizeBytes: number, now: number): Promise<'pinned' | 'deleting'>;
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
  /** Hard-deletes pending rows created before `createdBefore` (abandoned presigned uploads). */
  purgePendingUploads(createdBefore: number, batch: number): Promise<number>;

  // --- sessions ---
  getSession(tenantId: string, sessionId: string): Promise<SessionRow | null>;
  listSessions(tenantId: string, query: SessionQuery): Promise<SessionRow[]>;
  /** Sets `sealedAt` unless already set; returns the row, or null when the session is unknown. */
  sealSession(tenantId: string, sessionId: string, now: number): Promise<SessionRow | null>;

  // --- download links ---
  /**
   * Inserts the link unless the tenant already has `maxActive` links that are unexpired at `now`;
   * says which happened.
   */
  createLink(link: LinkRow, maxActive: number, now: number): Promise<boolean>;
  getLink(id: string): Promise<{ link: LinkRow; artifact: ArtifactRow; tenant: TenantRow } | null>;
  countActiveLinks(tenantId: string, now: number): Promise<number>;
  /**
   * The artifact's links unexpired at `query.now`, newest first (`created_at DESC, id DESC`),
   * after `query.after` (the last row of the previous page) when given; at most `query.limit`.
   */
  listLinks(tenantId: string, artifactId: string, query: LinkQuery): Promise<LinkRow[]>;
  /** Deletes the tenant's link (another tenant's is left alone); true when a row went. */
  deleteLink(tenantId: string, linkId: string): Promise<boolean>;

  // --- pages ---
  /**
   * Publishes the artifact: creates its page with `slug` when it has none, else updates the
   * existing page (keeping its slug) and sets it live. Returns the page. A page that is taken
   * down is left exactly as it is, and returned with `takenDownAt` set: the caller refuses.
   */
  upsertPage(page: PageInput, now: number): Promise<PageRow>;
  getPageBySlug(slug: string): Promise<{ page: PageRow; artifact: ArtifactRow; tenant: TenantRow } | null>;
  getPageForArtifact(tenantId: string, artifactId: string): Promise<PageRow | null>;
  /**
   * Takes the tenant's page offline, found by artifact id or slug. Returns the page (also when it
   * was already offline), or null when this tenant has no such page.
   */
  unpublishPage(tenantId: string, artifactIdOrSlug: string, now: number): Promise<PageRow | null>;
  /**
   * Operator takedown of any tenant's page by slug: offline (live=false) and marked taken down
   * (the first takedown's time is kept), so that a publish cannot bring it back. Returns the page
   * after the change, or null when no page has this slug.
   */
  takeDownPage(slug: string, now: number): Promise<PageRow | null>;
  /**
   * Lifts a takedown: the owner may publish again. The page itself stays offline until then.
   * Returns the page after the change, or null when no page has this slug.
   */
  restorePage(slug: string, now: number): Promise<PageRow | null>;

  // --- usage ---
  /**
   * Adds `n` (0 or more) to each (tenant, month `YYYY-MM`) request counter, atomically per counter
   * (concurrent callers never lose an increment), and returns each counter's total after the
   * addition, in order. `n: 0` just reads a total. Instances batch their counts through this.
   */
  addRequests(counts: readonly RequestDelta[]): Promise<number[]>;
  getRequestCount(tenantId: string, month: string): Promise<number>;

  // --- sweeper: each call handles at most `batch` items in its own transaction, and returns how many ---
  /**
   * Active artifacts with `expiresAt <= now` → expired, with the same side effects as a soft delete.
   * With `tenantId`, only that tenant's, and the figures read after it returns (storage, session
   * counts, links) count none of the rows it reports as done or finds due: a row another caller
   * is expiring at that moment is waited for, not skipped. A tenant with nothing due costs no write.
   */
  expireArtifacts(now: number, batch: number, tenantId?: string): Promise<number>;
  /** Hard-deletes rows deleted before `deletedBefore` and rows expired before `expiredBefore`, with their links and pages. */
  purgeArtifacts(deletedBefore: number, expiredBefore: number, batch: number): Promise<number>;
  /** Marks blob rows that no artifact row (in any status) references as orphaned at `now`. */
  markOrphanBlobs(now: number, batch: number): Promise<number>;
  /**
   * Claims blobs orphaned before `orphanedBefore` and still unreferenced (and stale claims made
   * before `staleClaimBefore`) for deletion, stamping them with `now`. While claimed, `pinBlob`
   * answers `deleting`. The caller deletes the bytes, then calls `forgetBlob`.
   */
  claimOrphanBlobs(orphanedBefore: number, staleClaimBefore: number, now: number, batch: number): Promise<BlobRef[]>;
  /** Removes the blob row if the claim `claimedAt` still holds. */
  forgetBlob(ref: BlobRef): Promise<void>;
  /** Drops idempotency records created before `before`. */
  purgeIdempotency(before: number, batch: number): Promise<number>;
  /** Drops links that expired at or before `now`, or whose artifact is no longer active. */
  purgeDeadLinks(now: number, batch: number): Promise<number>;
}
