import type { BlobRef } from '../../ports/metadata-store.js';
import { purgeArtifacts, retireArtifacts } from './artifact-writes.js';
import { SqlSharingStore } from './sharing.js';
import { all } from './work.js';

/**
 * Sweeper steps: each is one bounded transaction, safe to run from several processes at once. On
 * PostgreSQL candidates are picked with `FOR UPDATE SKIP LOCKED`, so sweepers on several instances
 * split the work instead of queueing on (or double-processing) the same rows, and the locked rows'
 * conditions are re-checked on their latest version, so a row an upload just touched drops out.
 */

const DUE = "status = 'active' AND expires_at IS NOT NULL AND expires_at <= ?";
const UNREFERENCED =
  'NOT EXISTS (SELECT 1 FROM artifacts AS a WHERE a.tenant_id = c.tenant_id AND a.content_hash = c.content_hash)';

export class SqlSweeperStore extends SqlSharingStore {
  async expireArtifacts(now: number, batch: number, tenantId?: string): Promise<number> {
    const d = this.d;
    const expiring = `SELECT id FROM artifacts ${d.indexedBy('artifacts_expiring')} WHERE ${DUE}`;
    // The tenant form runs before usage reads: a read first, so the usual "nothing due" opens no
    // transaction. It then waits for rows a sweeper holds (FOR UPDATE, not SKIP LOCKED), so the
    // figures read next are exact; both lock in expires_at order, so neither deadlocks the other.
    if (tenantId !== undefined && !(await this.sql.one(`${expiring} AND tenant_id = ? LIMIT 1`, [now, tenantId]))) {
      return 0;
    }
    return this.sql.write(function* () {
      const rows =
        tenantId === undefined
          ? yield* all<{ id: string }>(`${expiring} ORDER BY expires_at LIMIT ?${d.skipLocked}`, [now, batch])
          : yield* all<{ id: string }>(`${expiring} AND tenant_id = ? ORDER BY expires_at LIMIT ?${d.forUpdate}`, [
              now,
              tenantId,
              batch,
            ]);
      const ids = rows.map((r) => r.id);
      return (yield* retireArtifacts(d, ids, 'expired', now)).length;
    });
  }

  async purgeArtifacts(deletedBefore: number, expiredBefore: number, batch: number, now: number): Promise<number> {
    const d = this.d;
    return this.sql.write(function* () {
      // Two selects, because FOR UPDATE does not combine with UNION.
      const deleted = yield* all<{ id: string }>(
        `SELECT id FROM artifacts ${d.indexedBy('artifacts_deleted')}
         WHERE status = 'deleted' AND deleted_at < ? LIMIT ?${d.skipLocked}`,
        [deletedBefore, batch],
      );
      const expired =
        deleted.length < batch
          ? yield* all<{ id: string }>(
              `SELECT id FROM artifacts ${d.indexedBy('artifacts_expired')}
               WHERE status = 'expired' AND expires_at < ? LIMIT ?${d.skipLocked}`,
              [expiredBefore, batch - deleted.length],
            )
          : [];
      const ids = [...deleted, ...expired].map((r) => r.id);
      yield* purgeArtifacts(d, ids, now);
      return ids.length;
    });
  }

  async purgePendingUploads(createdBefore: number, batch: number): Promise<number> {
    const d = this.d;
    return this.sql.write(function* () {
      const rows = yield* all<{ id: string }>(
        `SELECT id FROM artifacts WHERE status = 'pending' AND created_at < ? LIMIT ?${d.skipLocked}`,
        [createdBefore, batch],
      );
      const ids = rows.map((r) => r.id);
      yield* purgeArtifacts(d, ids);
      return ids.length;
    });
  }

  async markOrphanBlobs(now: number, batch: number): Promise<number> {
    // Candidates are blobs with no live reference; rows in any status still keep the bytes.
    return this.sql.run(
      `UPDATE blobs SET orphaned_at = ? WHERE (tenant_id, content_hash) IN (
         SELECT c.tenant_id, c.content_hash FROM blobs AS c ${this.d.indexedBy('blobs_orphan_candidates')}
         WHERE c.live_refs = 0 AND c.orphaned_at IS NULL AND c.deleting_since IS NULL AND ${UNREFERENCED}
         LIMIT ?${this.d.skipLocked})`,
      [now, batch],
    );
  }

  async claimOrphanBlobs(
    orphanedBefore: number,
    staleClaimBefore: number,
    now: number,
    batch: number,
  ): Promise<BlobRef[]> {
    const d = this.d;
    const claim = (index: string, where: string) =>
      `UPDATE blobs SET deleting_since = ? WHERE (tenant_id, content_hash) IN (
         SELECT c.tenant_id, c.content_hash FROM blobs AS c ${d.indexedBy(index)} WHERE ${where} LIMIT ?${d.skipLocked})
       RETURNING tenant_id, content_hash`;
    const claimed = await this.sql.write(function* () {
      // Re-checked at claim time: an upload may have pinned or referenced the bytes since the mark
      // (a pin clears orphaned_at).
      const orphans = yield* all<{ tenant_id: string; content_hash: string }>(
        claim(
          'blobs_orphaned',
          `c.orphaned_at IS NOT NULL AND c.deleting_since IS NULL AND c.orphaned_at < ? AND c.live_refs = 0 AND ${UNREFERENCED}`,
        ),
        [now, orphanedBefore, batch],
      );
      // A claim this old belongs to a sweeper that died mid-delete; pins were refused meanwhile.
      const stale =
        orphans.length < batch
          ? yield* all<{ tenant_id: string; content_hash: string }>(
              claim('blobs_deleting', 'c.deleting_since IS NOT NULL AND c.deleting_since < ?'),
              [now, staleClaimBefore, batch - orphans.length],
            )
          : [];
      return [...orphans, ...stale];
    });
    return claimed.map((b) => ({ tenantId: b.tenant_id, contentHash: b.content_hash, claimedAt: now }));
  }

  async forgetBlob(ref: BlobRef): Promise<void> {
    const forget = 'DELETE FROM blobs WHERE tenant_id = ? AND content_hash = ? AND deleting_since = ?';
    await this.sql.run(forget, [ref.tenantId, ref.contentHash, ref.claimedAt]);
  }

  async purgeIdempotency(before: number, batch: number): Promise<number> {
    return this.sql.run(
      `DELETE FROM idempotency WHERE (tenant_id, key) IN (
         SELECT tenant_id, key FROM idempotency ${this.d.indexedBy('idempotency_by_age')}
         WHERE created_at < ? LIMIT ?${this.d.skipLocked})`,
      [before, batch],
    );
  }

  async purgeDeadLinks(now: number, revokedBefore: number, batch: number): Promise<number> {
    // A revoked link expired at its revoke; its row stays until revokedBefore passes it.
    // Session links: dead by time alone (a session outlives its artifacts; the archive shows what is left).
    const sessions = await this.sql.run(
      `DELETE FROM session_links WHERE id IN (
         SELECT l.id FROM session_links AS l WHERE (l.expires_at <= ? AND l.revoked_at IS NULL) OR l.revoked_at <= ?
         LIMIT ?${this.d.skipLocked})`,
      [now, revokedBefore, batch],
    );
    const artifacts = await this.sql.run(
      `DELETE FROM links WHERE id IN (
         SELECT l.id FROM links AS l WHERE (l.expires_at <= ? AND l.revoked_at IS NULL) OR l.revoked_at <= ?
           OR NOT EXISTS (SELECT 1 FROM artifacts AS a WHERE a.id = l.artifact_id AND a.status = 'active')
         LIMIT ?${this.d.skipLocked})`,
      [now, revokedBefore, batch],
    );
    return sessions + artifacts;
  }
}
