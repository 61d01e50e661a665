import { beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore, TenantRow } from '../../src/ports/metadata-store.js';
import { DAY, HOUR, type MakeMetadataStore, metadataFixture, PIN_WRITER, T0, UNLIMITED } from './metadata-fixture.js';

/**
 * The SweeperStore contract: hard deletes past retention, orphan blobs (mark, claim, forget),
 * idempotency records and dead links.
 * Exercised through the port only, on each adapter (SQLite, PostgreSQL), from the shared fixture
 * (metadata-fixture.ts): an empty database, migrated as every start does, with tenants A and B.
 */
export function sweeperStoreContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`SweeperStore contract: ${name}`, () => {
    const { state, sha, row, put, link, page } = metadataFixture(makeStore);
    let store: MetadataStore;
    let A: TenantRow;
    let B: TenantRow;
    beforeEach(() => {
      ({ store, A, B } = state);
    });

    describe('sweeper', () => {
      it('purgeArtifacts hard-deletes old deleted and expired rows with their pages, in batches', async () => {
        const oldDeleted = await put(row(A.id));
        const newDeleted = await put(row(A.id));
        const oldExpired = await put(row(A.id, { expiresAt: T0 + 1 }));
        const newExpired = await put(row(A.id, { expiresAt: T0 + 50 * DAY }));
        const live = await put(row(A.id));
        const p = await store.upsertPage(page(oldDeleted), T0);
        await store.softDeleteArtifact(A.id, oldDeleted.id, T0 + DAY);
        await store.softDeleteArtifact(A.id, newDeleted.id, T0 + 40 * DAY);
        await store.expireArtifacts(T0 + 50 * DAY, 100);

        const cutoff = T0 + 30 * DAY;
        expect(await store.purgeArtifacts(cutoff, cutoff, 1, cutoff)).toBe(1);
        expect(await store.purgeArtifacts(cutoff, cutoff, 10, cutoff)).toBe(1);
        expect(await store.purgeArtifacts(cutoff, cutoff, 10, cutoff)).toBe(0);
        expect(await store.getArtifact(A.id, oldDeleted.id)).toBeNull();
        expect(await store.getArtifact(A.id, oldExpired.id)).toBeNull();
        expect(await store.getPageBySlug(p.slug)).toBeNull();
        expect(await store.getPageForArtifact(A.id, oldDeleted.id)).toBeNull();
        expect((await store.getArtifact(A.id, newDeleted.id))!.status).toBe('deleted');
        expect((await store.getArtifact(A.id, newExpired.id))!.status).toBe('expired');
        expect((await store.getArtifact(A.id, live.id))!.status).toBe('active');
      });

      it('marks, claims and forgets only blobs no artifact row references', async () => {
        const shared = sha('shared');
        const one = await put(row(A.id, { contentHash: shared }));
        const two = await put(row(A.id, { contentHash: shared }));
        const solo = await put(row(A.id));
        const live = await put(row(A.id));
        // Pinned but never inserted: an upload that died between pin and insert.
        expect(await store.pinBlob(A.id, sha('abandoned'), 9, T0, PIN_WRITER)).toBe('write');

        await store.softDeleteArtifact(A.id, one.id, T0 + 1);
        await store.softDeleteArtifact(A.id, solo.id, T0 + 1);
        // Soft-deleted rows still reference their bytes: only the abandoned pin is orphaned.
        expect(await store.markOrphanBlobs(T0 + 2, 100)).toBe(1);
        expect(await store.markOrphanBlobs(T0 + 2, 100)).toBe(0);

        await store.purgeArtifacts(T0 + 2, T0 + 2, 100, T0 + 2);
        // `shared` is still referenced by `two`; `solo`'s bytes are orphaned now.
        expect(await store.markOrphanBlobs(T0 + 3, 100)).toBe(1);

        const claimed = await store.claimOrphanBlobs(T0 + 10, T0 - HOUR, T0 + 20, 100);
        expect(claimed.map((c) => c.contentHash).sort()).toEqual([sha('abandoned'), solo.contentHash].sort());
        for (const c of claimed) expect(c).toMatchObject({ tenantId: A.id, claimedAt: T0 + 20 });
        expect(await store.pinBlob(A.id, solo.contentHash, 100, T0 + 21, PIN_WRITER)).toBe('deleting');
        expect(await store.pinBlob(A.id, shared, 100, T0 + 21, PIN_WRITER)).toBe('stored');
        expect(await store.claimOrphanBlobs(T0 + 10, T0 - HOUR, T0 + 22, 100)).toEqual([]);

        for (const c of claimed) await store.forgetBlob(c);
        expect(await store.pinBlob(A.id, solo.contentHash, 100, T0 + 23, PIN_WRITER)).toBe('write');
        expect(await store.markOrphanBlobs(T0 + 24, 100)).toBe(1);
        expect((await store.getArtifact(A.id, two.id))!.status).toBe('active');
        expect((await store.getArtifact(A.id, live.id))!.status).toBe('active');
        expect(await store.blobIsLive(A.id, shared)).toBe(true);
      });

      it('never claims bytes referenced again, or orphaned too recently', async () => {
        await store.pinBlob(A.id, sha('x'), 100, T0, PIN_WRITER);
        await store.pinBlob(A.id, sha('y'), 100, T0, PIN_WRITER);
        await store.pinBlob(A.id, sha('z'), 100, T0, PIN_WRITER);
        await store.pinBlob(A.id, sha('pending'), 100, T0, PIN_WRITER);
        await store.insertArtifact({
          artifact: row(A.id, { contentHash: sha('pending'), status: 'pending' }),
          storageLimitBytes: UNLIMITED,
        });
        expect(await store.markOrphanBlobs(T0 + 1, 100)).toBe(3);
        // x is pinned again (an upload is about to use it), y gets an artifact row.
        expect(await store.pinBlob(A.id, sha('x'), 100, T0 + 2, PIN_WRITER)).toBe('write');
        await store.insertArtifact({ artifact: row(A.id, { contentHash: sha('y') }), storageLimitBytes: UNLIMITED });
        expect(await store.claimOrphanBlobs(T0 + 1, T0 - HOUR, T0 + 3, 100)).toEqual([]);
        const claimed = await store.claimOrphanBlobs(T0 + 2, T0 - HOUR, T0 + 3, 100);
        expect(claimed).toEqual([{ tenantId: A.id, contentHash: sha('z'), claimedAt: T0 + 3 }]);
      });

      it('re-claims stale claims and honours only the current claim', async () => {
        await store.pinBlob(A.id, sha('x'), 100, T0, PIN_WRITER);
        await store.markOrphanBlobs(T0, 100);
        const [first] = await store.claimOrphanBlobs(T0 + 1, T0 - HOUR, T0 + 10, 100);
        expect(first).toBeDefined();
        // Not stale yet: nobody else may take it.
        expect(await store.claimOrphanBlobs(T0 + 1, T0 + 10, T0 + 20, 100)).toEqual([]);
        const [second] = await store.claimOrphanBlobs(T0 + 1, T0 + 11, T0 + 30, 100);
        expect(second).toEqual({ tenantId: A.id, contentHash: sha('x'), claimedAt: T0 + 30 });
        await store.forgetBlob(first!);
        expect(await store.pinBlob(A.id, sha('x'), 100, T0 + 31, PIN_WRITER)).toBe('deleting');
        await store.forgetBlob(second!);
        expect(await store.pinBlob(A.id, sha('x'), 100, T0 + 32, PIN_WRITER)).toBe('write');
      });

      it('marks and claims in bounded batches', async () => {
        for (let i = 0; i < 5; i++) await store.pinBlob(i % 2 ? A.id : B.id, sha(`b${i}`), 1, T0, PIN_WRITER);
        expect(await store.markOrphanBlobs(T0, 2)).toBe(2);
        expect(await store.markOrphanBlobs(T0, 2)).toBe(2);
        expect(await store.markOrphanBlobs(T0, 2)).toBe(1);
        expect(await store.markOrphanBlobs(T0, 2)).toBe(0);
        const all = [
          ...(await store.claimOrphanBlobs(T0 + 1, T0, T0 + 1, 3)),
          ...(await store.claimOrphanBlobs(T0 + 1, T0, T0 + 1, 3)),
        ];
        expect(all).toHaveLength(5);
        expect(new Set(all.map((r) => `${r.tenantId}/${r.contentHash}`)).size).toBe(5);
        expect(await store.claimOrphanBlobs(T0 + 1, T0, T0 + 1, 3)).toEqual([]);
      });

      it('purgeIdempotency drops records created before the cutoff, in batches', async () => {
        for (let i = 0; i < 3; i++) {
          await store.insertArtifact({
            artifact: row(A.id, { createdAt: T0 + i }),
            storageLimitBytes: UNLIMITED,
            idempotency: { key: `k${i}`, notBefore: 0, response: { status: 201, body: `${i}` } },
          });
        }
        expect(await store.purgeIdempotency(T0 + 2, 1)).toBe(1);
        expect(await store.purgeIdempotency(T0 + 2, 5)).toBe(1);
        expect(await store.purgeIdempotency(T0 + 2, 5)).toBe(0);
        expect(await store.getIdempotency(A.id, 'k0', 0)).toBeNull();
        expect(await store.getIdempotency(A.id, 'k1', 0)).toBeNull();
        expect(await store.getIdempotency(A.id, 'k2', 0)).toEqual({ status: 201, body: '2' });
      });

      it('purgeDeadLinks drops expired links, links revoked long enough ago and links to inactive artifacts, in batches', async () => {
        const a = await put(row(A.id));
        const pending = row(A.id, { status: 'pending' });
        await store.insertArtifact({ artifact: pending, storageLimitBytes: UNLIMITED });
        const keep = link(a, { expiresAt: T0 + HOUR + 1 });
        await store.createLink(keep, 100, T0);
        await store.createLink(link(a, { expiresAt: T0 + HOUR }), 100, T0);
        await store.createLink(link(a, { expiresAt: T0 + 1 }), 100, T0);
        const orphan = link(pending, { expiresAt: T0 + DAY });
        await store.createLink(orphan, 100, T0);
        // Revoked (and so expired) at T0 + 1 and at T0 + HOUR: kept until revoked before the second bound.
        const revokedEarly = link(a, { expiresAt: T0 + DAY });
        const revokedLate = link(a, { expiresAt: T0 + DAY });
        for (const l of [revokedEarly, revokedLate]) await store.createLink(l, 100, T0);
        await store.revokeLink(A.id, revokedEarly.id, T0 + 1);
        await store.revokeLink(A.id, revokedLate.id, T0 + HOUR);
        expect(await store.purgeDeadLinks(T0 + HOUR, T0 + 1, 2)).toBe(2);
        expect(await store.purgeDeadLinks(T0 + HOUR, T0 + 1, 2)).toBe(2);
        expect(await store.purgeDeadLinks(T0 + HOUR, T0 + 1, 2)).toBe(0);
        expect(await store.getLink(orphan.id)).toBeNull();
        expect(await store.getLink(revokedEarly.id)).toBeNull();
        expect((await store.getLink(revokedLate.id))?.link).toMatchObject({ revokedAt: T0 + HOUR });
        expect((await store.getLink(keep.id))?.link).toEqual(keep);
        expect(await store.countActiveLinks(A.id, T0)).toBe(1);
      });
    });
  });
}
