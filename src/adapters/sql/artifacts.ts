import type {
  ArtifactQuery,
  ArtifactRow,
  BlobPin,
  BlobWriter,
  IdempotentResponse,
  InsertArtifactInput,
  InsertArtifactResult,
  PageRow,
  SessionQuery,
  SessionRow,
  SoftDeleteResult,
  TenantRow,
} from '../../ports/metadata-store.js';
import { activateArtifact, insertArtifact, purgeArtifacts, retireArtifacts } from './artifact-writes.js';
import { appendEvents, sessionEvent } from './events.js';
import { buildArtifactListQuery, buildMetadataDensityQuery, buildSessionListQuery } from './list-queries.js';
import { DENSITY_PROBE, type Density, sparsestFirst } from './metadata-driver.js';
import { ARTIFACTS, PAGES, SESSIONS, TENANTS } from './rows.js';
import { Joined, type Stored } from './table.js';
import { SqlTenantStore } from './tenants.js';
import { KeyFailure, TurnBatch } from './turn-batch.js';
import { one } from './work.js';

const ARTIFACT = ARTIFACTS.list;
const SESSION = SESSIONS.list;
const GET_ARTIFACT = `SELECT ${ARTIFACT} FROM artifacts WHERE id = ? AND tenant_id = ?`;
const GET_SESSION = `SELECT ${SESSION} FROM sessions WHERE tenant_id = ? AND session_id = ?`;

const ARTIFACT_PAGE = new Joined({ a: ARTIFACTS, p: PAGES });
const WITH_PAGE = `SELECT ${ARTIFACT_PAGE.list}
  FROM artifacts AS a LEFT JOIN pages AS p ON p.artifact_id = a.id AND p.tenant_id = a.tenant_id`;
const ARTIFACT_TENANT = new Joined({ a: ARTIFACTS, t: TENANTS });
const ANY_TENANT = `SELECT ${ARTIFACT_TENANT.list}
  FROM artifacts AS a JOIN tenants AS t ON t.id = a.tenant_id WHERE a.id = ?`;

interface ArtifactKey {
  tenantId: string;
  id: string;
}

type ArtifactWithPage = { artifact: ArtifactRow; page: PageRow | null } | null;

function withPage(v: readonly unknown[] | null | undefined): ArtifactWithPage {
  if (!v) return null;
  const page = ARTIFACT_PAGE.read(v, 'p');
  return { artifact: ARTIFACT_PAGE.read(v, 'a')!, page };
}

/** Blobs, artifacts, idempotency records and sessions. */
export class SqlArtifactStore extends SqlTenantStore {
  private readonly withPageSql = `${WITH_PAGE} WHERE a.id = ? AND a.tenant_id = ?`;
  private readonly withPagesSql = `${WITH_PAGE} WHERE ${this.d.inList('a.id')} AND ${this.d.inList('a.tenant_id')}`;

  /** GETs of one turn are read together at its end: the API's most frequent read (see TurnBatch). */
  private readonly artifactReads = new TurnBatch((keys: ArtifactKey[]) =>
    this.d.batchesReads ? this.readTogether(keys) : this.readEach(keys),
  );

  /** One statement for the turn's keys; each row is matched back to its key by id and tenant. */
  private async readTogether(keys: ArtifactKey[]): Promise<ArtifactWithPage[]> {
    if (keys.length === 1) return [withPage(await this.sql.row(this.withPageSql, [keys[0]!.id, keys[0]!.tenantId]))];
    const found = await this.sql.rows(this.withPagesSql, [
      this.d.list(keys.map((k) => k.id)),
      this.d.list(keys.map((k) => k.tenantId)),
    ]);
    const byId = new Map<string, NonNullable<ArtifactWithPage>>();
    for (const v of found) {
      const answer = withPage(v)!;
      byId.set(answer.artifact.id, answer);
    }
    const answered = new Set<NonNullable<ArtifactWithPage>>();
    return keys.map((k) => {
      const answer = byId.get(k.id);
      // ids are unique across tenants: a row of another tenant answers no key but its own tenant's.
      if (!answer || answer.artifact.tenantId !== k.tenantId) return null;
      // A key asked twice gets objects of its own.
      const own = answered.has(answer) ? structuredClone(answer) : answer;
      answered.add(answer);
      return own;
    });
  }

  /** Key by key, so a read that fails (a damaged page, say) fails only its own GET. */
  private async readEach(keys: ArtifactKey[]): Promise<(ArtifactWithPage | KeyFailure)[]> {
    const out: (ArtifactWithPage | KeyFailure)[] = [];
    for (const k of keys) {
      try {
        out.push(withPage(await this.sql.row(this.withPageSql, [k.id, k.tenantId])));
      } catch (err) {
        out.push(new KeyFailure(err));
      }
    }
    return out;
  }

  async pinBlob(
    tenantId: string,
    contentHash: string,
    sizeBytes: number,
    now: number,
    writer: BlobWriter,
  ): Promise<BlobPin> {
    // One statement: the upsert takes the row lock a claiming sweeper and every other pin also
    // need, and the WHERE leaves a claimed row untouched (no row returned = a sweeper is deleting
    // the bytes). The write goes to this caller unless an artifact references the bytes or
    // another writer's claim still holds (each SET sees the row as it was).
    const free = 'blobs.live_refs = 0 AND coalesce(blobs.writing_until, 0) <= ?';
    const row = await this.sql.change<{ live_refs: number; writer: string | null }>(
      `INSERT INTO blobs (tenant_id, content_hash, size_bytes, live_refs, orphaned_at, deleting_since, created_at,
         writer, writing_until)
       VALUES (?, ?, ?, 0, NULL, NULL, ?, ?, ?)
       ON CONFLICT (tenant_id, content_hash) DO UPDATE SET orphaned_at = NULL,
         writer = CASE WHEN ${free} THEN excluded.writer ELSE blobs.writer END,
         writing_until = CASE WHEN ${free} THEN excluded.writing_until ELSE blobs.writing_until END
       WHERE blobs.deleting_since IS NULL
       RETURNING live_refs, writer`,
      [tenantId, contentHash, sizeBytes, now, writer.owner, writer.until, now, now],
    );
    if (!row) return 'deleting';
    if (Number(row.live_refs) > 0) return 'stored';
    return row.writer === writer.owner ? 'write' : 'writing';
  }

  async releaseBlobWrite(tenantId: string, contentHash: string, owner: string): Promise<void> {
    await this.sql.run(
      'UPDATE blobs SET writer = NULL, writing_until = NULL WHERE tenant_id = ? AND content_hash = ? AND writer = ?',
      [tenantId, contentHash, owner],
    );
  }

  async blobIsLive(tenantId: string, contentHash: string): Promise<boolean> {
    const row = await this.sql.one<{ live_refs: number }>(
      'SELECT live_refs FROM blobs WHERE tenant_id = ? AND content_hash = ?',
      [tenantId, contentHash],
    );
    return (row?.live_refs ?? 0) > 0;
  }

  async insertArtifact(input: InsertArtifactInput): Promise<InsertArtifactResult> {
    return this.sql.writeTogether(() => insertArtifact(this.d, input));
  }

  async getArtifact(tenantId: string, id: string): Promise<ArtifactRow | null> {
    return ARTIFACTS.read(await this.sql.one<Stored>(GET_ARTIFACT, [id, tenantId]));
  }

  async getArtifactWithPage(tenantId: string, id: string): Promise<ArtifactWithPage> {
    return this.artifactReads.get({ tenantId, id });
  }

  async getArtifactAnyTenant(id: string): Promise<{ artifact: ArtifactRow; tenant: TenantRow } | null> {
    const v = await this.sql.row(ANY_TENANT, [id]);
    if (!v) return null;
    return { artifact: ARTIFACT_TENANT.read(v, 'a')!, tenant: ARTIFACT_TENANT.read(v, 't')! };
  }

  async listArtifacts(tenantId: string, query: ArtifactQuery): Promise<ArtifactRow[]> {
    const metadata = query.metadata ?? [];
    if (metadata.length > 1) {
      const density = buildMetadataDensityQuery(this.d, tenantId, metadata, DENSITY_PROBE);
      const found = await this.sql.all<Density & { i: number }>(density.sql, density.params);
      const densities = metadata.map((_, i) => found.find((r) => r.i === i) ?? { n: 0, oldest: null });
      query = { ...query, metadata: sparsestFirst(metadata, densities) };
    }
    const { sql, params } = buildArtifactListQuery(this.d, tenantId, query);
    return (await this.sql.all<Stored>(sql, params)).map((r) => ARTIFACTS.read(r));
  }

  async softDeleteArtifact(tenantId: string, id: string, now: number): Promise<SoftDeleteResult | null> {
    const d = this.d;
    // Concurrent deletes share SQLite's group commit, as uploads do.
    return this.sql.writeTogether(function* () {
      // Locked first, so two concurrent deletes retire the row (and free its bytes) once; the
      // winner is the call whose `UPDATE … WHERE status = 'active'` changed the row.
      const row = yield* one<Stored>(`${GET_ARTIFACT}${d.forUpdate}`, [id, tenantId]);
      if (!row) return null;
      const [retired] = yield* retireArtifacts(d, [id], 'deleted', now);
      return retired ? { artifact: retired, deleted: true } : { artifact: ARTIFACTS.read(row), deleted: false };
    });
  }

  async setPendingContent(tenantId: string, id: string, contentHash: string, sizeBytes: number): Promise<boolean> {
    const changed = await this.sql.run(
      "UPDATE artifacts SET content_hash = ?, size_bytes = ? WHERE id = ? AND tenant_id = ? AND status = 'pending'",
      [contentHash, sizeBytes, id, tenantId],
    );
    return changed === 1;
  }

  async dropPending(tenantId: string, id: string): Promise<boolean> {
    const d = this.d;
    return this.sql.write(function* () {
      const found = yield* one<{ id: string }>(
        `SELECT id FROM artifacts WHERE id = ? AND tenant_id = ? AND status = 'pending'${d.forUpdate}`,
        [id, tenantId],
      );
      if (!found) return false;
      yield* purgeArtifacts(d, [id]);
      return true;
    });
  }

  async activateArtifact(tenantId: string, id: string, storageLimitBytes: number, now: number) {
    const d = this.d;
    return this.sql.write(function* () {
      // Locked first: two concurrent completions activate (and count the bytes) once.
      const row = yield* one<Stored>(`${GET_ARTIFACT}${d.forUpdate}`, [id, tenantId]);
      return row ? yield* activateArtifact(d, ARTIFACTS.read(row), storageLimitBytes, now) : null;
    });
  }

  async getIdempotency(tenantId: string, key: string, notBefore: number): Promise<IdempotentResponse | null> {
    const row = await this.sql.one<IdempotentResponse>(
      'SELECT status, body FROM idempotency WHERE tenant_id = ? AND key = ? AND created_at > ?',
      [tenantId, key, notBefore],
    );
    return row ? { status: row.status, body: row.body } : null;
  }

  async getSession(tenantId: string, sessionId: string): Promise<SessionRow | null> {
    return SESSIONS.read(await this.sql.one<Stored>(GET_SESSION, [tenantId, sessionId]));
  }

  async listSessions(tenantId: string, query: SessionQuery): Promise<SessionRow[]> {
    const { sql, params } = buildSessionListQuery(this.d, tenantId, query);
    return (await this.sql.all<Stored>(sql, params)).map((r) => SESSIONS.read(r));
  }

  async sealSession(tenantId: string, sessionId: string, now: number): Promise<SessionRow | null> {
    return this.sql.write(function* () {
      // Only the seal that changes the row records it; the first sealedAt is kept. The UPDATE
      // locks the row against an insert that is checking the seal.
      const sealed = yield* one<Stored>(
        `UPDATE sessions SET sealed_at = ? WHERE tenant_id = ? AND session_id = ? AND sealed_at IS NULL
         RETURNING ${SESSION}`,
        [now, tenantId, sessionId],
      );
      if (!sealed) return SESSIONS.read(yield* one<Stored>(GET_SESSION, [tenantId, sessionId]));
      const row = SESSIONS.read(sealed);
      yield* appendEvents([sessionEvent('session.sealed', row, now)]);
      return row;
    });
  }
}
