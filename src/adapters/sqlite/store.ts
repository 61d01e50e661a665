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
import { KeyFailure, TurnBatch } from '../shared/turn-batch.js';
import { SqlResumableUploads } from '../sql/resumable-uploads.js';
import { SqliteAccountStore } from './account-store.js';
import { activateArtifactTx, insertArtifactTx, purgeArtifactTx, retireArtifactTx } from './artifact-writes.js';
import { CredentialsEpoch } from './credentials-epoch.js';
import { Connection } from './database.js';
import { buildArtifactListQuery, buildSessionListQuery, METADATA_DENSITY_SQL } from './list-queries.js';
import {
  type ApiKeyRecord,
  ARTIFACT_COLUMNS,
  type ArtifactRecord,
  JoinedColumns,
  type SessionRecord,
  TENANT_COLUMNS,
  type TenantRecord,
  toApiKey,
  toArtifact,
  toSession,
  toTenant,
} from './rows.js';
import * as sharing from './sharing.js';
import { SqliteRunner } from './sql-runner.js';
import * as sweeper from './sweeper.js';
import * as tenants from './tenants.js';

const ARTIFACT_TENANT = new JoinedColumns({ a: ARTIFACT_COLUMNS, t: TENANT_COLUMNS });

export interface SqliteMetadataStoreOptions {
  /** A database file path, or ':memory:'. */
  path: string;
}

/**
 * The embedded MetadataStore: one SQLite file in WAL mode. better-sqlite3 is synchronous, so each
 * method runs to completion before the next starts in this process; writes use BEGIN IMMEDIATE so
 * other processes on the same file (the server and `cairn admin`) serialize with it.
 */
export class SqliteMetadataStore implements MetadataStore {
  private readonly c: Connection;
  /** Users, browser sessions and OAuth state, on the same connection (and so the same migrations). */
  readonly accounts: SqliteAccountStore;
  /** Resumable uploads' state, on the same connection (the SQL shared with PostgreSQL). */
  readonly resumables: ResumableUploadStore;

  private readonly credentials: CredentialsEpoch;
  /**
   * GETs of one turn are read together at its end: the API's most frequent read (see TurnBatch).
   * Each key is read on its own, so a read that fails (a damaged page, say) fails only its GET.
   */
  private readonly artifactReads = new TurnBatch((keys: { tenantId: string; id: string }[]) =>
    keys.map((k) => {
      try {
        return sharing.getArtifactWithPage(this.c, k.tenantId, k.id);
      } catch (err) {
        return new KeyFailure(err);
      }
    }),
  );

  constructor(options: SqliteMetadataStoreOptions) {
    this.c = new Connection(options.path);
    this.accounts = new SqliteAccountStore(this.c);
    this.resumables = new SqlResumableUploads(new SqliteRunner(this.c));
    this.credentials = new CredentialsEpoch(this.c);
  }

  async migrate(): Promise<MigrationResult> {
    return this.c.migrate();
  }

  async ping(): Promise<void> {
    this.c.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.c.close();
  }

  async getOrSetSetting(name: string, value: string): Promise<string> {
    return tenants.getOrSetSetting(this.c, name, value);
  }

  async createTenant(tenant: TenantRow): Promise<TenantRow> {
    return tenants.createTenant(this.c, tenant);
  }

  async getTenant(id: string): Promise<TenantRow | null> {
    return tenants.getTenant(this.c, id);
  }

  async getTenantByName(name: string): Promise<TenantRow | null> {
    const row = this.c.get<TenantRecord>('SELECT * FROM tenants WHERE name = ?', name);
    return row ? toTenant(row) : null;
  }

  async listTenants(): Promise<TenantRow[]> {
    return this.c.all<TenantRecord>('SELECT * FROM tenants ORDER BY created_at, id').map(toTenant);
  }

  async updateTenant(id: string, change: { plan?: PlanName; suspended?: boolean }): Promise<TenantRow | null> {
    this.credentials.changed();
    return tenants.updateTenant(this.c, id, change);
  }

  async createApiKey(key: ApiKeyRow, maxActive: number): Promise<boolean> {
    return tenants.createApiKey(this.c, key, maxActive);
  }

  async findApiKey(hash: string): Promise<{ key: ApiKeyRow; tenant: TenantRow } | null> {
    return tenants.findApiKey(this.c, hash);
  }

  async listApiKeys(tenantId: string): Promise<ApiKeyRow[]> {
    return this.c
      .all<ApiKeyRecord>('SELECT * FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id', tenantId)
      .map(toApiKey);
  }

  async revokeApiKey(tenantId: string, keyId: string, now: number): Promise<boolean> {
    this.credentials.changed();
    return this.c.write(
      () =>
        this.c.run(
          'UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL',
          now,
          tenantId,
          keyId,
        ) > 0,
    );
  }

  credentialsEpoch(): number {
    return this.credentials.current();
  }

  async pinBlob(tenantId: string, contentHash: string, sizeBytes: number, now: number): Promise<'pinned' | 'deleting'> {
    return this.c.writeTogether(() => {
      const blob = this.c.get<{ deleting_since: number | null }>(
        'SELECT deleting_since FROM blobs WHERE tenant_id = ? AND content_hash = ?',
        tenantId,
        contentHash,
      );
      if (blob?.deleting_since != null) return 'deleting';
      this.c.run(
        `INSERT INTO blobs (tenant_id, content_hash, size_bytes, live_refs, orphaned_at, deleting_since, created_at)
         VALUES (?, ?, ?, 0, NULL, NULL, ?)
         ON CONFLICT (tenant_id, content_hash) DO UPDATE SET orphaned_at = NULL`,
        tenantId,
        contentHash,
        sizeBytes,
        now,
      );
      return 'pinned';
    });
  }

  async blobIsLive(tenantId: string, contentHash: string): Promise<boolean> {
    const row = this.c.get<{ live_refs: number }>(
      'SELECT live_refs FROM blobs WHERE tenant_id = ? AND content_hash = ?',
      tenantId,
      contentHash,
    );
    return (row?.live_refs ?? 0) > 0;
  }

  async insertArtifact(input: InsertArtifactInput): Promise<InsertArtifactResult> {
    return this.c.writeTogether(() => insertArtifactTx(this.c, input));
  }

  async getArtifact(tenantId: string, id: string): Promise<ArtifactRow | null> {
    const row = this.c.get<ArtifactRecord>('SELECT * FROM artifacts WHERE id = ? AND tenant_id = ?', id, tenantId);
    return row ? toArtifact(row) : null;
  }

  async getArtifactWithPage(
    tenantId: string,
    id: string,
  ): Promise<{ artifact: ArtifactRow; page: PageRow | null } | null> {
    return this.artifactReads.get({ tenantId, id });
  }

  async getArtifactAnyTenant(id: string): Promise<{ artifact: ArtifactRow; tenant: TenantRow } | null> {
    const J = ARTIFACT_TENANT;
    const v = this.c.getValues(
      J.select('FROM artifacts AS a JOIN tenants AS t ON t.id = a.tenant_id WHERE a.id = ?'),
      id,
    );
    if (!v) return null;
    return {
      artifact: toArtifact(J.record<ArtifactRecord>(v, 'a')!),
      tenant: toTenant(J.record<TenantRecord>(v, 't')!),
    };
  }

  async listArtifacts(tenantId: string, query: ArtifactQuery): Promise<ArtifactRow[]> {
    const metadata = query.metadata ?? [];
    if (metadata.length > 1) {
      const densities = metadata.map((m) =>
        this.c.get<Density>(METADATA_DENSITY_SQL, tenantId, m.key, m.value, DENSITY_PROBE),
      );
      query = { ...query, metadata: sparsestFirst(metadata, densities as Density[]) };
    }
    const { sql, params } = buildArtifactListQuery(tenantId, query);
    return this.c.all<ArtifactRecord>(sql, ...params).map(toArtifact);
  }

  async softDeleteArtifact(tenantId: string, id: string, now: number): Promise<SoftDeleteResult | null> {
    return this.c.write(() => {
      const sql = 'SELECT * FROM artifacts WHERE id = ? AND tenant_id = ?';
      const row = this.c.get<ArtifactRecord>(sql, id, tenantId);
      if (!row) return null;
      if (!retireArtifactTx(this.c, row, 'deleted', now)) return { artifact: toArtifact(row), deleted: false };
      return { artifact: toArtifact(this.c.get<ArtifactRecord>(sql, id, tenantId)!), deleted: true };
    });
  }

  async setPendingContent(tenantId: string, id: string, contentHash: string, sizeBytes: number): Promise<boolean> {
    return this.c.write(
      () =>
        this.c.run(
          "UPDATE artifacts SET content_hash = ?, size_bytes = ? WHERE id = ? AND tenant_id = ? AND status = 'pending'",
          contentHash,
          sizeBytes,
          id,
          tenantId,
        ) === 1,
    );
  }

  async activateArtifact(
    tenantId: string,
    id: string,
    storageLimitBytes: number,
    now: number,
  ): Promise<ArtifactRow | null> {
    return this.c.write(() => {
      const row = this.c.get<ArtifactRecord>('SELECT * FROM artifacts WHERE id = ? AND tenant_id = ?', id, tenantId);
      return row ? activateArtifactTx(this.c, toArtifact(row), storageLimitBytes, now) : null;
    });
  }

  async purgePendingUploads(createdBefore: number, batch: number): Promise<number> {
    return this.c.write(() => {
      const ids = this.c.all<{ id: string }>(
        "SELECT id FROM artifacts WHERE status = 'pending' AND created_at < ? LIMIT ?",
        createdBefore,
        batch,
      );
      for (const { id } of ids) purgeArtifactTx(this.c, id);
      return ids.length;
    });
  }

  async getIdempotency(tenantId: string, key: string, notBefore: number): Promise<IdempotentResponse | null> {
    const row = this.c.get<IdempotentResponse>(
      'SELECT status, body FROM idempotency WHERE tenant_id = ? AND key = ? AND created_at > ?',
      tenantId,
      key,
      notBefore,
    );
    return row ? { status: row.status, body: row.body } : null;
  }

  async getSession(tenantId: string, sessionId: string): Promise<SessionRow | null> {
    const row = this.c.get<SessionRecord>(
      'SELECT * FROM sessions WHERE tenant_id = ? AND session_id = ?',
      tenantId,
      sessionId,
    );
    return row ? toSession(row) : null;
  }

  async listSessions(tenantId: string, query: SessionQuery): Promise<SessionRow[]> {
    const { sql, params } = buildSessionListQuery(tenantId, query);
    return this.c.all<SessionRecord>(sql, ...params).map(toSession);
  }

  async sealSession(tenantId: string, sessionId: string, now: number): Promise<SessionRow | null> {
    return this.c.write(() => {
      this.c.run(
        'UPDATE sessions SET sealed_at = ? WHERE tenant_id = ? AND session_id = ? AND sealed_at IS NULL',
        now,
        tenantId,
        sessionId,
      );
      const row = this.c.get<SessionRecord>(
        'SELECT * FROM sessions WHERE tenant_id = ? AND session_id = ?',
        tenantId,
        sessionId,
      );
      return row ? toSession(row) : null;
    });
  }

  async createLink(link: LinkRow, maxActive: number, now: number): Promise<boolean> {
    return sharing.createLink(this.c, link, maxActive, now);
  }

  async getLink(id: string): Promise<{ link: LinkRow; artifact: ArtifactRow; tenant: TenantRow } | null> {
    return sharing.getLink(this.c, id);
  }

  async countActiveLinks(tenantId: string, now: number): Promise<number> {
    return sharing.countActiveLinks(this.c, tenantId, now);
  }

  async listLinks(tenantId: string, artifactId: string, query: LinkQuery): Promise<LinkRow[]> {
    return sharing.listLinks(this.c, tenantId, artifactId, query);
  }

  async deleteLink(tenantId: string, linkId: string): Promise<boolean> {
    return sharing.deleteLink(this.c, tenantId, linkId);
  }

  async upsertPage(page: PageInput, now: number): Promise<PageRow> {
    return sharing.upsertPage(this.c, page, now);
  }

  async getPageBySlug(slug: string): Promise<{ page: PageRow; artifact: ArtifactRow; tenant: TenantRow } | null> {
    return sharing.getPageBySlug(this.c, slug);
  }

  async getPageForArtifact(tenantId: string, artifactId: string): Promise<PageRow | null> {
    return sharing.getPageForArtifact(this.c, tenantId, artifactId);
  }

  async unpublishPage(tenantId: string, artifactIdOrSlug: string, now: number): Promise<PageRow | null> {
    return sharing.unpublishPage(this.c, tenantId, artifactIdOrSlug, now);
  }

  async takeDownPage(slug: string, now: number): Promise<PageRow | null> {
    return sharing.takeDownPage(this.c, slug, now);
  }

  async restorePage(slug: string, now: number): Promise<PageRow | null> {
    return sharing.restorePage(this.c, slug, now);
  }

  async addRequests(counts: readonly RequestDelta[]): Promise<number[]> {
    return tenants.addRequests(this.c, counts);
  }

  async getRequestCount(tenantId: string, month: string): Promise<number> {
    return tenants.getRequestCount(this.c, tenantId, month);
  }

  async expireArtifacts(now: number, batch: number, tenantId?: string): Promise<number> {
    return sweeper.expireArtifacts(this.c, now, batch, tenantId);
  }

  async purgeArtifacts(deletedBefore: number, expiredBefore: number, batch: number): Promise<number> {
    return sweeper.purgeArtifacts(this.c, deletedBefore, expiredBefore, batch);
  }

  async markOrphanBlobs(now: number, batch: number): Promise<number> {
    return sweeper.markOrphanBlobs(this.c, now, batch);
  }

  async claimOrphanBlobs(
    orphanedBefore: number,
    staleClaimBefore: number,
    now: number,
    batch: number,
  ): Promise<BlobRef[]> {
    return sweeper.claimOrphanBlobs(this.c, orphanedBefore, staleClaimBefore, now, batch);
  }

  async forgetBlob(ref: BlobRef): Promise<void> {
    sweeper.forgetBlob(this.c, ref);
  }

  async purgeIdempotency(before: number, batch: number): Promise<number> {
    return sweeper.purgeIdempotency(this.c, before, batch);
  }

  async purgeDeadLinks(now: number, batch: number): Promise<number> {
    return sweeper.purgeDeadLinks(this.c, now, batch);
  }
}
