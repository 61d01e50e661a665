import type { BlobRef } from '../../ports/metadata-store.js';
import { purgeArtifactTx, retireArtifactTx } from './artifact-writes.js';
import type { Connection } from './database.js';
import type { ArtifactRecord } from './rows.js';

/** Sweeper steps: each is one bounded write transaction, safe to run from several processes at once. */

const DUE = "status = 'active' AND expires_at IS NOT NULL AND expires_at <= ?";

export function expireArtifacts(c: Connection, now: number, batch: number, tenantId?: string): number {
  // The tenant form runs before usage reads: a read first, so the usual "nothing due" takes no
  // write lock. It walks the due rows of all tenants (the sweeper keeps that set to about a
  // minute's worth) rather than needing an index of its own.
  if (tenantId !== undefined) {
    const due = c.get(
      `SELECT 1 FROM artifacts INDEXED BY artifacts_expiring WHERE ${DUE} AND tenant_id = ? LIMIT 1`,
      now,
      tenantId,
    );
    if (!due) return 0;
  }
  return c.write(() => {
    const rows =
      tenantId === undefined
        ? c.all<ArtifactRecord>(
            `SELECT * FROM artifacts INDEXED BY artifacts_expiring WHERE ${DUE} ORDER BY expires_at LIMIT ?`,
            now,
            batch,
          )
        : c.all<ArtifactRecord>(
            `SELECT * FROM artifacts INDEXED BY artifacts_expiring WHERE ${DUE} AND tenant_id = ?
             ORDER BY expires_at LIMIT ?`,
            now,
            tenantId,
            batch,
          );
    let n = 0;
    for (const row of rows) if (retireArtifactTx(c, row, 'expired', now)) n++;
    return n;
  });
}

export function purgeArtifacts(c: Connection, deletedBefore: number, expiredBefore: number, batch: number): number {
  return c.write(() => {
    const ids = c.all<{ id: string }>(
      `SELECT id FROM (
         SELECT id FROM artifacts INDEXED BY artifacts_deleted WHERE status = 'deleted' AND deleted_at < ?
         UNION ALL
         SELECT id FROM artifacts INDEXED BY artifacts_expired WHERE status = 'expired' AND expires_at < ?
       ) LIMIT ?`,
      deletedBefore,
      expiredBefore,
      batch,
    );
    for (const { id } of ids) purgeArtifactTx(c, id);
    return ids.length;
  });
}

const UNREFERENCED =
  'NOT EXISTS (SELECT 1 FROM artifacts AS a WHERE a.tenant_id = b.tenant_id AND a.content_hash = b.content_hash)';

export function markOrphanBlobs(c: Connection, now: number, batch: number): number {
  return c.write(() => {
    // Candidates are blobs with no live reference; rows in any status still keep the bytes.
    const found = c.all<{ tenant_id: string; content_hash: string }>(
      `SELECT b.tenant_id, b.content_hash FROM blobs AS b INDEXED BY blobs_orphan_candidates
       WHERE b.live_refs = 0 AND b.orphaned_at IS NULL AND b.deleting_since IS NULL AND ${UNREFERENCED}
       LIMIT ?`,
      batch,
    );
    for (const b of found) {
      c.run(
        'UPDATE blobs SET orphaned_at = ? WHERE tenant_id = ? AND content_hash = ?',
        now,
        b.tenant_id,
        b.content_hash,
      );
    }
    return found.length;
  });
}

export function claimOrphanBlobs(
  c: Connection,
  orphanedBefore: number,
  staleClaimBefore: number,
  now: number,
  batch: number,
): BlobRef[] {
  return c.write(() => {
    // Re-checked at claim time: an upload may have pinned or referenced the bytes since the mark.
    const orphans = c.all<{ tenant_id: string; content_hash: string }>(
      `SELECT b.tenant_id, b.content_hash FROM blobs AS b INDEXED BY blobs_orphaned
       WHERE b.orphaned_at IS NOT NULL AND b.deleting_since IS NULL AND b.orphaned_at < ?
         AND b.live_refs = 0 AND ${UNREFERENCED}
       LIMIT ?`,
      orphanedBefore,
      batch,
    );
    // A claim this old belongs to a sweeper that died mid-delete; pins were refused meanwhile.
    const stale = c.all<{ tenant_id: string; content_hash: string }>(
      `SELECT b.tenant_id, b.content_hash FROM blobs AS b INDEXED BY blobs_deleting
       WHERE b.deleting_since IS NOT NULL AND b.deleting_since < ? LIMIT ?`,
      staleClaimBefore,
      batch - orphans.length,
    );
    const refs: BlobRef[] = [];
    for (const b of [...orphans, ...stale]) {
      c.run(
        'UPDATE blobs SET deleting_since = ? WHERE tenant_id = ? AND content_hash = ?',
        now,
        b.tenant_id,
        b.content_hash,
      );
      refs.push({ tenantId: b.tenant_id, contentHash: b.content_hash, claimedAt: now });
    }
    return refs;
  });
}

export function forgetBlob(c: Connection, ref: BlobRef): void {
  c.write(() => {
    c.run(
      'DELETE FROM blobs WHERE tenant_id = ? AND content_hash = ? AND deleting_since = ?',
      ref.tenantId,
      ref.contentHash,
      ref.claimedAt,
    );
  });
}

export function purgeIdempotency(c: Connection, before: number, batch: number): number {
  return c.write(() =>
    c.run(
      `DELETE FROM idempotency WHERE rowid IN (
         SELECT rowid FROM idempotency INDEXED BY idempotency_by_age WHERE created_at < ? LIMIT ?)`,
      before,
      batch,
    ),
  );
}

export function purgeDeadLinks(c: Connection, now: number, batch: number): number {
  return c.write(() =>
    c.run(
      `DELETE FROM links WHERE id IN (
         SELECT l.id FROM links AS l LEFT JOIN artifacts AS a ON a.id = l.artifact_id
         WHERE l.expires_at <= ? OR a.status IS NOT 'active' LIMIT ?)`,
      now,
      batch,
    ),
  );
}
