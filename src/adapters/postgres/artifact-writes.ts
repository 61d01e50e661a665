import type { ArtifactRow, InsertArtifactInput, InsertArtifactResult } from '../../ports/metadata-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import { artifactInsertValues } from '../shared/metadata-rows.js';
import { one, type Querier } from './database.js';
import { assertStorableMetadata, metadataIndexValue } from './rows.js';

/**
 * The body of `insertArtifact`, inside the caller's transaction. Locks are taken in the order
 * idempotency key -> session -> blob -> tenant (the retire path uses the same order from the
 * session on), so two writers on the same rows queue instead of deadlocking.
 */
export async function insertArtifactTx(q: Querier, input: InsertArtifactInput): Promise<InsertArtifactResult> {
  const { artifact: a, idempotency } = input;
  if (a.status !== 'active' && a.status !== 'pending') {
    throw new Error(`insertArtifact takes an active or pending row, not '${a.status}'.`);
  }
  assertStorableMetadata(a.metadata);

  if (idempotency) {
    // Claims the key first. A concurrent duplicate blocks on this row until we commit, then finds
    // the fresh record (the WHERE refuses to overwrite it) and replays; if we roll back, it
    // claims the key itself. Only a record older than `notBefore` is replaced.
    const claimed = await q.query(
      `INSERT INTO idempotency (tenant_id, key, created_at, status, body, artifact_id) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant_id, key) DO UPDATE SET created_at = excluded.created_at, status = excluded.status,
         body = excluded.body, artifact_id = excluded.artifact_id
       WHERE idempotency.created_at <= $7`,
      [
        a.tenantId,
        idempotency.key,
        a.createdAt,
        idempotency.response.status,
        idempotency.response.body,
        a.id,
        idempotency.notBefore,
      ],
    );
    if (claimed.rowCount === 0) {
      const prior = await one<{ status: number; body: string }>(
        q,
        'SELECT status, body FROM idempotency WHERE tenant_id = $1 AND key = $2',
        [a.tenantId, idempotency.key],
      );
      if (prior) return { kind: 'replay', response: { status: prior.status, body: prior.body } };
      throw new Error('Idempotency record vanished during insert.');
    }
  }

  await checkNotSealed(q, a);
  // Every check that can refuse comes before the artifact row; a throw rolls back the rest.
  if (a.status === 'active') await addLiveReference(q, a, input.storageLimitBytes);

  await q.query(
    `INSERT INTO artifacts (id, tenant_id, filename, content_type, size_bytes, content_hash, metadata,
       session_id, agent_id, created_at, expires_at, deleted_at, status)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12, $13)`,
    artifactInsertValues(a),
  );
  if (a.status === 'active') await indexAndCount(q, a);
  return { kind: 'created', artifact: a };
}

/** Locks an existing session row, so a concurrent seal waits for this write (or this write for the seal). */
async function checkNotSealed(q: Querier, a: ArtifactRow): Promise<void> {
  if (a.sessionId === null) return;
  const session = await one<{ sealed_at: number | null }>(
    q,
    'SELECT sealed_at FROM sessions WHERE tenant_id = $1 AND session_id = $2 FOR UPDATE',
    [a.tenantId, a.sessionId],
  );
  if (session && session.sealed_at !== null) {
    throw new CairnError('session_sealed', `Session ${a.sessionId} is sealed; it accepts no more uploads.`);
  }
}

/** What becoming active means beyond the blob reference: the metadata index and the session row. */
async function indexAndCount(q: Querier, a: ArtifactRow): Promise<void> {
  await indexMetadata(q, a);
  if (a.sessionId === null) return;
  await q.query(
    `INSERT INTO sessions (tenant_id, session_id, artifact_count, sealed_at, first_artifact_at, last_artifact_at)
     VALUES ($1, $2, 1, NULL, $3, $3)
     ON CONFLICT (tenant_id, session_id) DO UPDATE SET
       artifact_count = sessions.artifact_count + 1,
       first_artifact_at = least(sessions.first_artifact_at, excluded.first_artifact_at),
       last_artifact_at = greatest(sessions.last_artifact_at, excluded.last_artifact_at)`,
    [a.tenantId, a.sessionId, a.createdAt],
  );
}

/**
 * pending -> active for a completed presigned upload, the row already locked by the caller. It
 * enters lists at completion time, so `createdAt` moves to `now` and `expiresAt` keeps its TTL
 * from there (the SQLite adapter's rule).
 */
export async function activateArtifactTx(
  q: Querier,
  row: ArtifactRow,
  limit: number,
  now: number,
): Promise<ArtifactRow> {
  if (row.status !== 'pending') return row;
  const a: ArtifactRow = {
    ...row,
    status: 'active',
    createdAt: now,
    expiresAt: row.expiresAt === null ? null : row.expiresAt + (now - row.createdAt),
  };
  await checkNotSealed(q, a);
  await addLiveReference(q, a, limit);
  await q.query(
    "UPDATE artifacts SET status = 'active', created_at = $2, expires_at = $3 WHERE id = $1 AND status = 'pending'",
    [a.id, a.createdAt, a.expiresAt],
  );
  await indexAndCount(q, a);
  return a;
}

/**
 * Counts one more active reference to the blob. The upsert locks the blob row, so concurrent
 * inserts of the same bytes agree on which one is first; the first adds the size to the tenant,
 * under the tenant row's lock, refusing when the limit would be passed.
 */
async function addLiveReference(q: Querier, a: ArtifactRow, limit: number): Promise<void> {
  // The port asks callers to pin first; a missing row is still recorded rather than lost.
  const blob = await one<{ size_bytes: number; live_refs: number }>(
    q,
    `INSERT INTO blobs (tenant_id, content_hash, size_bytes, live_refs, orphaned_at, deleting_since, created_at)
     VALUES ($1, $2, $3, 1, NULL, NULL, $4)
     ON CONFLICT (tenant_id, content_hash) DO UPDATE SET live_refs = blobs.live_refs + 1, orphaned_at = NULL
     RETURNING size_bytes, live_refs`,
    [a.tenantId, a.contentHash, a.sizeBytes, a.createdAt],
  );
  if (blob?.live_refs !== 1) return;
  const tenant = await one<{ storage_bytes: number }>(
    q,
    'SELECT storage_bytes FROM tenants WHERE id = $1 FOR NO KEY UPDATE',
    [a.tenantId],
  );
  if (!tenant) throw new Error(`Unknown tenant ${a.tenantId}.`);
  if (tenant.storage_bytes + blob.size_bytes > limit) {
    throw new CairnError('quota_exceeded', `Storage limit of ${limit} bytes would be exceeded.`);
  }
  await q.query('UPDATE tenants SET storage_bytes = storage_bytes + $2 WHERE id = $1', [a.tenantId, blob.size_bytes]);
}

async function indexMetadata(q: Querier, a: ArtifactRow): Promise<void> {
  const keys: string[] = [];
  const values: string[] = [];
  for (const [key, value] of Object.entries(a.metadata)) {
    const indexed = metadataIndexValue(value);
    if (indexed === null) continue;
    keys.push(key);
    values.push(indexed);
  }
  if (keys.length === 0) return;
  await q.query(
    `INSERT INTO artifact_meta (artifact_id, key, tenant_id, value, created_at)
     SELECT $1, k, $2, v, $3 FROM unnest($4::text[], $5::text[]) AS u (k, v)`,
    [a.id, a.tenantId, a.createdAt, keys, values],
  );
}

/**
 * Moves active artifacts (already locked by the caller) to `deleted` or `expired` with every side
 * effect, set-wise so a sweeper batch costs a handful of statements: session counts, blob
 * references (and the tenant's bytes for blobs losing their last one), metadata index rows,
 * links and pages. Rows that are not active are skipped. Returns how many moved.
 */
export async function retireArtifactsTx(
  q: Querier,
  ids: string[],
  to: 'deleted' | 'expired',
  now: number,
): Promise<number> {
  if (ids.length === 0) return 0;
  const { rows } = await q.query<{ id: string; tenant_id: string; content_hash: string; session_id: string | null }>(
    `UPDATE artifacts SET status = $2, deleted_at = $3 WHERE id = ANY($1::text[]) AND status = 'active'
     RETURNING id, tenant_id, content_hash, session_id`,
    [ids, to, to === 'deleted' ? now : null],
  );
  if (rows.length === 0) return 0;
  const moved = rows.map((r) => r.id);
  const tenants = rows.map((r) => r.tenant_id);

  const withSession = rows.filter((r) => r.session_id !== null);
  if (withSession.length > 0) {
    await q.query(
      `UPDATE sessions AS s SET artifact_count = greatest(0, s.artifact_count - g.n)
       FROM (SELECT t, sid, count(*)::int AS n FROM unnest($1::text[], $2::text[]) AS u (t, sid) GROUP BY t, sid) AS g
       WHERE s.tenant_id = g.t AND s.session_id = g.sid`,
      [withSession.map((r) => r.tenant_id), withSession.map((r) => r.session_id)],
    );
  }
  // One statement: drop the references, then free the bytes of blobs whose last one went.
  await q.query(
    `WITH g AS (
       SELECT t, h, count(*)::int AS n FROM unnest($1::text[], $2::text[]) AS u (t, h) GROUP BY t, h
     ), b AS (
       UPDATE blobs SET live_refs = greatest(0, blobs.live_refs - g.n)
       FROM g WHERE blobs.tenant_id = g.t AND blobs.content_hash = g.h AND blobs.live_refs > 0
       RETURNING blobs.tenant_id, blobs.size_bytes, blobs.live_refs
     )
     UPDATE tenants SET storage_bytes = greatest(0, tenants.storage_bytes - f.freed)
     FROM (SELECT tenant_id, sum(size_bytes)::bigint AS freed FROM b WHERE live_refs = 0 GROUP BY tenant_id) AS f
     WHERE tenants.id = f.tenant_id`,
    [tenants, rows.map((r) => r.content_hash)],
  );
  await q.query('DELETE FROM artifact_meta WHERE artifact_id = ANY($1::text[])', [moved]);
  await q.query('DELETE FROM links WHERE artifact_id = ANY($1::text[])', [moved]);
  await q.query('UPDATE pages SET live = false, updated_at = $2 WHERE artifact_id = ANY($1::text[]) AND live', [
    moved,
    now,
  ]);
  return rows.length;
}

/** Removes artifact rows for good, with what still points at them. Blob rows are left to the orphan sweep. */
export async function purgeArtifactsTx(q: Querier, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query('DELETE FROM artifact_meta WHERE artifact_id = ANY($1::text[])', [ids]);
  await q.query('DELETE FROM links WHERE artifact_id = ANY($1::text[])', [ids]);
  await q.query('DELETE FROM pages WHERE artifact_id = ANY($1::text[])', [ids]);
  await q.query('DELETE FROM artifacts WHERE id = ANY($1::text[])', [ids]);
}
