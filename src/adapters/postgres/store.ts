import type {
  ApiKeyRow,
  ArtifactQuery,
  ArtifactRow,
  BlobRef,
  IdempotentResponse,
  InsertArtifactInput,
  InsertArtifactResult,
  LinkQuery,
  LinkRow,
  MetadataStore,
  MigrationResult,
  PageInput,
  PageRow,
  RequestDelta,
  SessionQuery,
  SessionRow,
  SoftDeleteResult,
  TenantRow,
} from '../../ports/metadata-store.js';
import type { ResumableUploadStore } from '../../ports/resumable-upload-store.js';
import type { PlanName } from '../../shared/plan-name.js';
import { DENSITY_PROBE, type Density, sparsestFirst } from '../shared/metadata-driver.js';
import { TurnBatch } from '../shared/turn-batch.js';
import { SqlResumableUploads } from '../sql/resumable-uploads.js';
import { PostgresAccountStore } from './account-store.js';
import { activateArtifactTx, insertArtifactTx, purgeArtifactsTx, retireArtifactsTx } from './artifact-writes.js';
import { CredentialsWatch } from './credentials-watch.js';
import { all, allPrepared, Database, one, onePrepared } from './database.js';
import { buildArtifactListQuery, buildSessionListQuery, METADATA_DENSITY_SQL } from './list-queries.js';
import { runMigrations } from './migrate.js';
import {
  type ApiKeyRecord,
  type ArtifactRecord,
  metadataMatchValue,
  SESSION_SELECT,
  type SessionRecord,
  type TenantRecord,
  toApiKey,
  toArtifact,
  toSession,
  toTenant,
} from './rows.js';
import * as sharing from './sharing.js';
import { PostgresRunner } from './sql-runner.js';
import * as sweeper from './sweeper.js';
import * as tenants from './tenants.js';

// Built once, like every statement text with a select list spliced in (see ARTIFACT_WITH_PAGE).
const GET_SESSION = `SELECT ${SESSION_SELECT} FROM sessions WHERE tenant_id = $1 AND session_id = $2`;

export interface PostgresMetadataStoreOptions {
  /** `postgres://user:password@host:5432/database` (any libpq-style URL pg accepts). */
  connectionString: string;
  /**
   * A schema to keep every table in, created by `migrate()` when missing; every pooled
   * connection gets it as its `search_path`. Lets tests (or several Cairn deployments) share one
   * database. Default: the server's default search_path (normally `public`).
   */
  schema?: string;
  /** Pool size per instance (default 10). */
  maxConnections?: number;
  /** Bounds on a slow or unreachable database (see PoolOptions); unset: none. */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  maxWaiting?: number;
}

/**
 * The scale-out MetadataStore: PostgreSQL through a `pg` pool, shared by any number of Cairn
 * instances. Each port method is one statement or one transaction; races between instances are
 * settled by unique constraints (`ON CONFLICT`) and row locks, never by in-process state.
 */
export class PostgresMetadataStore implements MetadataStore {
  private readonly db: Database;
  private readonly schema: string | undefined;
  /** Users, browser sessions and OAuth state, on the same pool (and so the same migrations). */
  readonly accounts: PostgresAccountStore;
  /** Resumable uploads' state, on the same pool (the SQL shared with SQLite). */
  readonly resumables: ResumableUploadStore;
  private readonly credentials: CredentialsWatch;
  /** GETs of one turn share a query: the API's most frequent read (see TurnBatch). */
  private readonly artifactReads = new TurnBatch((keys: sharing.ArtifactKey[]) =>
    sharing.getArtifactsWithPages(this.q, keys),
  );

  constructor(options: PostgresMetadataStoreOptions) {
    this.schema = options.schema;
    const connection = {
      connectionString: options.connectionString,
      ...(options.schema === undefined ? {} : { schema: options.schema }),
    };
    this.db = new Database({
      ...connection,
      ...(options.maxConnections === undefined ? {} : { max: options.maxConnections }),
      ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
      ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
      ...(options.maxWaiting === undefined ? {} : { maxWaiting: options.maxWaiting }),
    });
    this.credentials = new CredentialsWatch(connection);
    this.accounts = new PostgresAccountStore(this.db);
    this.resumables = new SqlResumableUploads(new PostgresRunner(() => this.db.pool));
  }

  private get q() {
    return this.db.pool;
  }

  async migrate(): Promise<MigrationResult> {
    const { client, release } = await this.db.checkout();
    let broken: Error | undefined;
    try {
      // Building an index on a large table may take longer than a request's statement bound.
      await client.query('SET statement_timeout = 0');
      const result = await runMigrations(client, this.schema);
      await client.query('RESET statement_timeout');
      return result;
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      // A connection left without its bound is dropped rather than handed to a request.
      release(broken);
    }
  }

  /** Connections of the pool: open, idle, and calls waiting for one (for the metrics). */
  poolStats(): { total: number; idle: number; waiting: number; shed: number } {
    const { totalCount, idleCount, waitingCount } = this.db.pool;
    return { total: totalCount, idle: idleCount, waiting: waitingCount, shed: this.db.shedCount };
  }

  async ping(): Promise<void> {
    await this.db.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.credentials.close();
    await this.db.close();
  }

  async getOrSetSetting(name: string, value: string): Promise<string> {
    return tenants.getOrSetSetting(this.q, name, value);
  }

  async createTenant(tenant: TenantRow): Promise<TenantRow> {
    return tenants.createTenant(this.q, tenant);
  }

  async getTenant(id: string): Promise<TenantRow | null> {
    return tenants.getTenant(this.q, id);
  }

  async getTenantByName(name: string): Promise<TenantRow | null> {
    const row = await one<TenantRecord>(this.q, 'SELECT * FROM tenants WHERE name = $1', [name]);
    return row ? toTenant(row) : null;
  }

  async listTenants(): Promise<TenantRow[]> {
    return (await all<TenantRecord>(this.q, 'SELECT * FROM tenants ORDER BY created_at, id')).map(toTenant);
  }

  async updateTenant(id: string, change: { plan?: PlanName; suspended?: boolean }): Promise<TenantRow | null> {
    try {
      return await tenants.updateTenant(this.q, id, change, this.credentials.notifyArgs());
    } finally {
      this.credentials.changed();
    }
  }

  async createApiKey(key: ApiKeyRow, maxActive: number): Promise<boolean> {
    return tenants.createApiKey(this.db, key, maxActive);
  }

  async findApiKey(hash: string): Promise<{ key: ApiKeyRow; tenant: TenantRow } | null> {
    return tenants.findApiKey(this.q, hash);
  }

  async listApiKeys(tenantId: string): Promise<ApiKeyRow[]> {
    const rows = await all<ApiKeyRecord>(
      this.q,
      'SELECT * FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, id',
      [tenantId],
    );
    return rows.map(toApiKey);
  }

  async revokeApiKey(tenantId: string, keyId: string, now: number): Promise<boolean> {
    try {
      return await tenants.revokeApiKey(this.q, tenantId, keyId, now, this.credentials.notifyArgs());
    } finally {
      this.credentials.changed();
    }
  }

  credentialsEpoch(): number | null {
    return this.credentials.current();
  }

  async pinBlob(tenantId: string, contentHash: string, sizeBytes: number, now: number): Promise<'pinned' | 'deleting'> {
    // One statement: the upsert takes the row lock a claiming sweeper also needs, and the WHERE
    // leaves a claimed row untouched (no row returned = a sweeper is deleting the bytes).
    const row = await one(
      this.q,
      `INSERT INTO blobs (tenant_id, content_hash, size_bytes, live_refs, orphaned_at, deleting_since, created_at)
       VALUES ($1, $2, $3, 0, NULL, NULL, $4)
       ON CONFLICT (tenant_id, content_hash) DO UPDATE SET orphaned_at = NULL WHERE blobs.deleting_since IS NULL
       RETURNING 1`,
      [tenantId, contentHash, sizeBytes, now],
    );
    return row ? 'pinned' : 'deleting';
  }

  async blobIsLive(tenantId: string, contentHash: string): Promise<boolean> {
    const row = await one<{ live_refs: number }>(
      this.q,
      'SELECT live_refs FROM blobs WHERE tenant_id = $1 AND content_hash = $2',
      [tenantId, contentHash],
    );
    return (row?.live_refs ?? 0) > 0;
  }

  async insertArtifact(input: InsertArtifactInput): Promise<InsertArtifactResult> {
    return this.db.tx((q) => insertArtifactTx(q, input));
  }

  async getArtifact(tenantId: string, id: string): Promise<ArtifactRow | null> {
    const row = await one<ArtifactRecord>(this.q, 'SELECT * FROM artifacts WHERE id = $1 AND tenant_id = $2', [
      id,
      tenantId,
    ]);
    return row ? toArtifact(row) : null;
  }

  async getArtifactWithPage(tenantId: string, id: string): Promise<sharing.ArtifactWithPage> {
    return this.artifactReads.get({ tenantId, id });
  }

  async getArtifactAnyTenant(id: string): Promise<{ artifact: ArtifactRow; tenant: TenantRow } | null> {
    const row = await one<{ a: ArtifactRecord; t: TenantRecord }>(
      this.q,
      `SELECT to_jsonb(a.*) AS a, to_jsonb(t.*) AS t FROM artifacts AS a JOIN tenants AS t ON t.id = a.tenant_id
       WHERE a.id = $1`,
      [id],
    );
    return row ? { artifact: toArtifact(row.a), tenant: toTenant(row.t) } : null;
  }

  async listArtifacts(tenantId: string, query: ArtifactQuery): Promise<ArtifactRow[]> {
    const metadata = query.metadata ?? [];
    if (metadata.length > 1) {
      const found = await allPrepared<{ i: string; n: number; oldest: string | null }>(this.q, METADATA_DENSITY_SQL, [
        tenantId,
        metadata.map((m) => m.key),
        metadata.map((m) => metadataMatchValue(m.value)),
        DENSITY_PROBE,
      ]);
      const densities: Density[] = metadata.map(() => ({ n: 0, oldest: null }));
      for (const row of found) {
        densities[Number(row.i) - 1] = { n: Number(row.n), oldest: row.oldest === null ? null : Number(row.oldest) };
      }
      query = { ...query, metadata: sparsestFirst(metadata, densities) };
    }
    const { text, values } = buildArtifactListQuery(tenantId, query);
    return (await allPrepared<ArtifactRecord>(this.q, text, values)).map(toArtifact);
  }

  async softDeleteArtifact(tenantId: string, id: string, now: number): Promise<SoftDeleteResult | null> {
    return this.db.tx(async (q) => {
      const sql = 'SELECT * FROM artifacts WHERE id = $1 AND tenant_id = $2';
      // Locked first, so two concurrent deletes retire the row (and free its bytes) once; the
      // winner is the call whose `UPDATE … WHERE status = 'active'` changed the row.
      const row = await one<ArtifactRecord>(q, `${sql} FOR UPDATE`, [id, tenantId]);
      if (!row) return null;
      if ((await retireArtifactsTx(q, [id], 'deleted', now)) === 0)
        return { artifact: toArtifact(row), deleted: false };
      return { artifact: toArtifact((await one<ArtifactRecord>(q, sql, [id, tenantId]))!), deleted: true };
    });
  }

  async setPendingContent(tenantId: string, id: string, contentHash: string, sizeBytes: number): Promise<boolean> {
    const result = await this.q.query(
      "UPDATE artifacts SET content_hash = $3, size_bytes = $4 WHERE id = $2 AND tenant_id = $1 AND status = 'pending'",
      [tenantId, id, contentHash, sizeBytes],
    );
    return result.rowCount === 1;
  }

  async activateArtifact(
    tenantId: string,
    id: string,
    storageLimitBytes: number,
    now: number,
  ): Promise<ArtifactRow | null> {
    return this.db.tx(async (q) => {
      // Locked first: two concurrent completions activate (and count the bytes) once.
      const row = await one<ArtifactRecord>(q, 'SELECT * FROM artifacts WHERE id = $1 AND tenant_id = $2 FOR UPDATE', [
        id,
        tenantId,
      ]);
      return row ? activateArtifactTx(q, toArtifact(row), storageLimitBytes, now) : null;
    });
  }

  async purgePendingUploads(createdBefore: number, batch: number): Promise<number> {
    return this.db.tx(async (q) => {
      const rows = await all<{ id: string }>(
        q,
        "SELECT id FROM artifacts WHERE status = 'pending' AND created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED",
        [createdBefore, batch],
      );
      await purgeArtifactsTx(
        q,
        rows.map((r) => r.id),
      );
      return rows.length;
    });
  }

  async getIdempotency(tenantId: string, key: string, notBefore: number): Promise<IdempotentResponse | null> {
    const row = await one<IdempotentResponse>(
      this.q,
      'SELECT status, body FROM idempotency WHERE tenant_id = $1 AND key = $2 AND created_at > $3',
      [tenantId, key, notBefore],
    );
    return row ? { status: row.status, body: row.body } : null;
  }

  async getSession(tenantId: string, sessionId: string): Promise<SessionRow | null> {
    const row = await onePrepared<SessionRecord>(this.q, GET_SESSION, [tenantId, sessionId]);
    return row ? toSession(row) : null;
  }

  async listSessions(tenantId: string, query: SessionQuery): Promise<SessionRow[]> {
    const { text, values } = buildSessionListQuery(tenantId, query);
    return (await allPrepared<SessionRecord>(this.q, text, values)).map(toSession);
  }

  async sealSession(tenantId: string, sessionId: string, now: number): Promise<SessionRow | null> {
    // coalesce keeps the first sealedAt; the UPDATE returns the row either way (and locks it
    // against an insert that is checking the seal).
    const row = await one<SessionRecord>(
      this.q,
      `UPDATE sessions SET sealed_at = coalesce(sealed_at, $3) WHERE tenant_id = $1 AND session_id = $2 RETURNING *`,
      [tenantId, sessionId, now],
    );
    return row ? toSession(row) : null;
  }

  async createLink(link: LinkRow, maxActive: number, now: number): Promise<boolean> {
    return sharing.createLink(this.db, link, maxActive, now);
  }

  async getLink(id: string): Promise<{ link: LinkRow; artifact: ArtifactRow; tenant: TenantRow } | null> {
    return sharing.getLink(this.q, id);
  }

  async countActiveLinks(tenantId: string, now: number): Promise<number> {
    return sharing.countActiveLinks(this.q, tenantId, now);
  }

  async listLinks(tenantId: string, artifactId: string, query: LinkQuery): Promise<LinkRow[]> {
    return sharing.listLinks(this.q, tenantId, artifactId, query);
  }

  async deleteLink(tenantId: string, linkId: string): Promise<boolean> {
    return sharing.deleteLink(this.q, tenantId, linkId);
  }

  async upsertPage(page: PageInput, now: number): Promise<PageRow> {
    return sharing.upsertPage(this.q, page, now);
  }

  async getPageBySlug(slug: string): Promise<{ page: PageRow; artifact: ArtifactRow; tenant: TenantRow } | null> {
    return sharing.getPageBySlug(this.q, slug);
  }

  async getPageForArtifact(tenantId: string, artifactId: string): Promise<PageRow | null> {
    return sharing.getPageForArtifact(this.q, tenantId, artifactId);
  }

  async unpublishPage(tenantId: string, artifactIdOrSlug: string, now: number): Promise<PageRow | null> {
    return sharing.unpublishPage(this.db, tenantId, artifactIdOrSlug, now);
  }

  async takeDownPage(slug: string, now: number): Promise<PageRow | null> {
    return sharing.takeDownPage(this.q, slug, now);
  }

  async restorePage(slug: string, now: number): Promise<PageRow | null> {
    return sharing.restorePage(this.q, slug, now);
  }

  async addRequests(counts: readonly RequestDelta[]): Promise<number[]> {
    return tenants.addRequests(this.q, counts);
  }

  async getRequestCount(tenantId: string, month: string): Promise<number> {
    return tenants.getRequestCount(this.q, tenantId, month);
  }

  async expireArtifacts(now: number, batch: number, tenantId?: string): Promise<number> {
    return sweeper.expireArtifacts(this.db, now, batch, tenantId);
  }

  async purgeArtifacts(deletedBefore: number, expiredBefore: number, batch: number): Promise<number> {
    return sweeper.purgeArtifacts(this.db, deletedBefore, expiredBefore, batch);
  }

  async markOrphanBlobs(now: number, batch: number): Promise<number> {
    return sweeper.markOrphanBlobs(this.db, now, batch);
  }

  async claimOrphanBlobs(
    orphanedBefore: number,
    staleClaimBefore: number,
    now: number,
    batch: number,
  ): Promise<BlobRef[]> {
    return sweeper.claimOrphanBlobs(this.db, orphanedBefore, staleClaimBefore, now, batch);
  }

  async forgetBlob(ref: BlobRef): Promise<void> {
    await sweeper.forgetBlob(this.db, ref);
  }

  async purgeIdempotency(before: number, batch: number): Promise<number> {
    return sweeper.purgeIdempotency(this.db, before, batch);
  }

  async purgeDeadLinks(now: number, batch: number): Promise<number> {
    return sweeper.purgeDeadLinks(this.db, now, batch);
  }
}
