import type { BlobRef } from '../../ports/metadata-store.js';
import { purgeArtifactsTx, retireArtifactsTx } from './artifact-writes.js';
import { all, type Database } from './database.js';

/**
 * Sweeper steps: each is one bounded transaction. Candidates are picked with
 * `FOR UPDATE SKIP LOCKED`, so sweepers on several instances split the work instead of queueing
 * on (or double-processing) the same rows; the locked rows' conditions are re-checked by
 * PostgreSQL on their latest version, so a row an upload just touched drops out of the batch.
 */

const DUE = "status = 'active' AND expires_at IS NOT NULL AND expires_at <= $1";

export async function expireArtifacts(db: Database, now: number, batch: number, tenantId?: string): Promise<number> {
  // The tenant form runs before usage reads: a read first, so the usual "nothing due" opens no
  // transaction. It then waits for rows a sweeper holds (FOR UPDATE, not SKIP LOCKED), so the
  // figures read next are exact; both lock in expires_at order, so neither can deadlock the other.
  if (tenantId !== undefined) {
    const due = await db.pool.query(`SELECT 1 FROM artifacts WHERE ${DUE} AND tenant_id = $2 LIMIT 1`, [now, tenantId]);
    if (due.rowCount === 0) return 0;
  }
  return db.tx(async (q) => {
    const rows =
      tenantId === undefined
        ? await all<{ id: string }>(
            q,
            `SELECT id FROM artifacts WHERE ${DUE} ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
            [now, batch],
          )
        : await all<{ id: string }>(
            q,
            `SELECT id FROM artifacts WHERE ${DUE} AND tenant_id = $3 ORDER BY expires_at LIMIT $2 FOR UPDATE`,
            [now, batch, tenantId],
          );
    return retireArtifactsTx(
      q,
      rows.map((r) => r.id),
      'expired',
      now,
    );
  });
}

export async function purgeArtifacts(
  db: Database,
  deletedBefore: number,
  expiredBefore: number,
  batch: number,
): Promise<number> {
  return db.tx(async (q) => {
    // Two selects, because FOR UPDATE does not combine with UNION.
    const deleted = await all<{ id: string }>(
      q,
      `SELECT id FROM artifacts WHERE status = 'deleted' AND deleted_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [deletedBefore, batch],
    );
    const expired =
      deleted.length < batch
        ? await all<{ id: string }>(
            q,
            `SELECT id FROM artifacts WHERE status = 'expired' AND expires_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED`,
            [expiredBefore, batch - deleted.length],
          )
        : [];
    const ids = [...deleted, ...expired].map((r) => r.id);
    await purgeArtifactsTx(q, ids);
    return ids.length;
  });
}

const UNREFERENCED =
  'NOT EXISTS (SELECT 1 FROM artifacts AS a WHERE a.tenant_id = c.tenant_id AND a.content_hash = c.content_hash)';

export async function markOrphanBlobs(db: Database, now: number, batch: number): Promise<number> {
  return db.tx(async (q) => {
    // Candidates are blobs with no live reference; rows in any status still keep the bytes.
    const result = await q.query(
      `UPDATE blobs AS b SET orphaned_at = $1
       FROM (SELECT c.tenant_id, c.content_hash FROM blobs AS c
             WHERE c.live_refs = 0 AND c.orphaned_at IS NULL AND c.deleting_since IS NULL AND ${UNREFERENCED}
             LIMIT $2 FOR UPDATE SKIP LOCKED) AS s
       WHERE b.tenant_id = s.tenant_id AND b.content_hash = s.content_hash`,
      [now, batch],
    );
    return result.rowCount ?? 0;
  });
}

export async function claimOrphanBlobs(
  db: Database,
  orphanedBefore: number,
  staleClaimBefore: number,
  now: number,
  batch: number,
): Promise<BlobRef[]> {
  return db.tx(async (q) => {
    // Re-checked at claim time: an upload may have pinned or referenced the bytes since the mark
    // (a pin clears orphaned_at, which the locked re-check sees).
    const orphans = await all<{ tenant_id: string; content_hash: string }>(
      q,
      `UPDATE blobs AS b SET deleting_since = $3
       FROM (SELECT c.tenant_id, c.content_hash FROM blobs AS c
             WHERE c.orphaned_at IS NOT NULL AND c.deleting_since IS NULL AND c.orphaned_at < $1
               AND c.live_refs = 0 AND ${UNREFERENCED}
             LIMIT $2 FOR UPDATE SKIP LOCKED) AS s
       WHERE b.tenant_id = s.tenant_id AND b.content_hash = s.content_hash
       RETURNING b.tenant_id, b.content_hash`,
      [orphanedBefore, batch, now],
    );
    // A claim this old belongs to a sweeper that died mid-delete; pins were refused meanwhile.
    const stale =
      orphans.length < batch
        ? await all<{ tenant_id: string; content_hash: string }>(
            q,
            `UPDATE blobs AS b SET deleting_since = $3
             FROM (SELECT c.tenant_id, c.content_hash FROM blobs AS c
                   WHERE c.deleting_since IS NOT NULL AND c.deleting_since < $1
                   LIMIT $2 FOR UPDATE SKIP LOCKED) AS s
             WHERE b.tenant_id = s.tenant_id AND b.content_hash = s.content_hash
             RETURNING b.tenant_id, b.content_hash`,
            [staleClaimBefore, batch - orphans.length, now],
          )
        : [];
    return [...orphans, ...stale].map((b) => ({ tenantId: b.tenant_id, contentHash: b.content_hash, claimedAt: now }));
  });
}

export async function forgetBlob(db: Database, ref: BlobRef): Promise<void> {
  await db.pool.query('DELETE FROM blobs WHERE tenant_id = $1 AND content_hash = $2 AND deleting_since = $3', [
    ref.tenantId,
    ref.contentHash,
    ref.claimedAt,
  ]);
}

export async function purgeIdempotency(db: Database, before: number, batch: number): Promise<number> {
  const result = await db.pool.query(
    `DELETE FROM idempotency WHERE (tenant_id, key) IN (
       SELECT tenant_id, key FROM idempotency WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
    [before, batch],
  );
  return result.rowCount ?? 0;
}

export async function purgeDeadLinks(db: Database, now: number, batch: number): Promise<number> {
  const result = await db.pool.query(
    `DELETE FROM links WHERE id IN (
       SELECT l.id FROM links AS l LEFT JOIN artifacts AS a ON a.id = l.artifact_id
       WHERE l.expires_at <= $1 OR a.status IS DISTINCT FROM 'active'
       LIMIT $2 FOR UPDATE OF l SKIP LOCKED)`,
    [now, batch],
  );
  return result.rowCount ?? 0;
}
