import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MigrationResult, TenantRow } from '../../src/ports/metadata-store.js';
import type { ResumableCaps, ResumableUploadStore } from '../../src/ports/resumable-upload-store.js';

const NO_CAPS: ResumableCaps = { maxOpen: Number.MAX_SAFE_INTEGER, storageLimitBytes: Number.MAX_SAFE_INTEGER };

/** The ResumableUploadStore contract, run by every metadata engine (SQLite, PostgreSQL). */
export function resumableUploadStoreContract(
  name: string,
  make: () => Promise<{
    /** The metadata store the uploads belong to: its tenants own them. */
    store: { migrate(): Promise<MigrationResult>; createTenant(t: TenantRow): Promise<TenantRow> };
    resumables: ResumableUploadStore;
    /** The same state through a second connection (another process or instance). */
    openPeer: () => Promise<{ resumables: ResumableUploadStore; close: () => Promise<void> }>;
    cleanup: () => Promise<void>;
  }>,
): void {
  describe(`ResumableUploadStore contract: ${name}`, () => {
    let r: ResumableUploadStore;
    let openPeer: () => Promise<{ resumables: ResumableUploadStore; close: () => Promise<void> }>;
    let cleanup: () => Promise<void>;
    const T0 = 1_800_000_000_000;
    const upload = (id: string, tenantId = 'ten_a', expiresAt = T0 + 86_400_000) => ({
      id,
      tenantId,
      lengthBytes: 5 * 1024 ** 3,
      createdAt: T0,
      expiresAt,
    });
    const piece = (n: number, sizeBytes: number) => ({
      landingKey: `uploads/ten_a/art_x.${n}.0123456789abcdef`,
      sizeBytes,
    });

    beforeEach(async () => {
      const made = await make();
      await made.store.migrate();
      for (const [id, storageBytes] of [
        ['ten_a', 0],
        ['ten_b', 0],
        ['ten_full', 900],
      ] as const) {
        await made.store.createTenant({ id, name: id, plan: 'pro', suspended: false, createdAt: T0, storageBytes });
      }
      ({ resumables: r, openPeer, cleanup } = made);
    });
    afterEach(async () => cleanup());

    it('creates an upload at offset 0, visible to its tenant only', async () => {
      await r.createResumable(upload('art_1'), NO_CAPS);
      expect(await r.getResumable('ten_a', 'art_1')).toEqual({
        ...upload('art_1'),
        offsetBytes: 0,
        segments: [],
        leaseOwner: null,
        leaseUntil: null,
      });
      expect(await r.getResumable('ten_b', 'art_1')).toBeNull();
      expect(await r.getResumable('ten_a', 'art_2')).toBeNull();
    });

    it('gives the lease to one owner at a time until it lapses, across connections', async () => {
      await r.createResumable(upload('art_1'), NO_CAPS);
      const peer = await openPeer();
      try {
        const taken = await r.leaseResumable('ten_a', 'art_1', 'owner-a', T0, T0 + 15_000);
        expect(taken).toMatchObject({ id: 'art_1', leaseOwner: 'owner-a', leaseUntil: T0 + 15_000 });
        expect(await peer.resumables.leaseResumable('ten_a', 'art_1', 'owner-b', T0 + 1000, T0 + 16_000)).toBe('held');
        // Another tenant's id is no upload at all.
        expect(await peer.resumables.leaseResumable('ten_b', 'art_1', 'owner-b', T0, T0 + 1)).toBeNull();
        expect(await r.renewResumableLease('art_1', 'owner-a', T0 + 30_000)).toBe(true);
        expect(await peer.resumables.renewResumableLease('art_1', 'owner-b', T0 + 30_000)).toBe(false);
        expect(await peer.resumables.leaseResumable('ten_a', 'art_1', 'owner-b', T0 + 20_000, T0 + 35_000)).toBe(
          'held',
        );
        // Lapsed: another owner takes it, and the first can no longer record anything.
        expect(
          await peer.resumables.leaseResumable('ten_a', 'art_1', 'owner-b', T0 + 30_000, T0 + 45_000),
        ).toMatchObject({
          leaseOwner: 'owner-b',
        });
        expect(await r.appendResumable('art_1', 'owner-a', 0, piece(0, 10), T0)).toBe(false);
        // Released by its owner only.
        await r.releaseResumable('art_1', 'owner-a');
        expect((await r.getResumable('ten_a', 'art_1'))?.leaseOwner).toBe('owner-b');
        await peer.resumables.releaseResumable('art_1', 'owner-b');
        // A later turn, as for any other request: SQLite reads of one turn share one snapshot.
        await new Promise((resolve) => setImmediate(resolve));
        expect(await r.getResumable('ten_a', 'art_1')).toMatchObject({ leaseOwner: null, leaseUntil: null });
      } finally {
        await peer.close();
      }
    });

    it('records pieces in order for the lease holder at the expected offset only', async () => {
      await r.createResumable(upload('art_1'), NO_CAPS);
      await r.leaseResumable('ten_a', 'art_1', 'owner-a', T0, T0 + 15_000);
      expect(await r.appendResumable('art_1', 'owner-a', 0, piece(0, 100), T0)).toBe(true);
      // A stale offset records nothing (the caller's view of the upload was old).
      expect(await r.appendResumable('art_1', 'owner-a', 0, piece(0, 50), T0)).toBe(false);
      expect(await r.appendResumable('art_1', 'owner-a', 100, piece(100, 5 * 1024 ** 3 - 100), T0)).toBe(true);
      expect(await r.getResumable('ten_a', 'art_1')).toMatchObject({
        offsetBytes: 5 * 1024 ** 3,
        segments: [piece(0, 100), piece(100, 5 * 1024 ** 3 - 100)],
      });
    });

    it('one of two owners racing for a lapsed lease wins', async () => {
      await r.createResumable(upload('art_1'), NO_CAPS);
      const peer = await openPeer();
      try {
        const results = await Promise.all([
          r.leaseResumable('ten_a', 'art_1', 'owner-a', T0, T0 + 15_000),
          peer.resumables.leaseResumable('ten_a', 'art_1', 'owner-b', T0, T0 + 15_000),
        ]);
        expect(results.filter((x) => x === 'held')).toHaveLength(1);
      } finally {
        await peer.close();
      }
    });

    it('records nothing once the upload has expired', async () => {
      await r.createResumable(upload('art_1', 'ten_a', T0 + 1000), NO_CAPS);
      await r.leaseResumable('ten_a', 'art_1', 'owner-a', T0, T0 + 15_000);
      expect(await r.appendResumable('art_1', 'owner-a', 0, piece(0, 10), T0 + 1000)).toBe(false);
      expect(await r.appendResumable('art_1', 'owner-a', 0, piece(0, 10), T0 + 999)).toBe(true);
    });

    it('counts a tenant’s unexpired uploads and their lengths', async () => {
      expect(await r.openResumables('ten_a', T0)).toEqual({ count: 0, lengthBytes: 0 });
      await r.createResumable({ ...upload('art_1'), lengthBytes: 5 * 1024 ** 3 }, NO_CAPS);
      await r.createResumable({ ...upload('art_2', 'ten_a', T0 + 500), lengthBytes: 7 }, NO_CAPS);
      await r.createResumable({ ...upload('art_3', 'ten_b'), lengthBytes: 11 }, NO_CAPS);
      expect(await r.openResumables('ten_a', T0)).toEqual({ count: 2, lengthBytes: 5 * 1024 ** 3 + 7 });
      expect(await r.openResumables('ten_a', T0 + 500)).toEqual({ count: 1, lengthBytes: 5 * 1024 ** 3 });
      expect(await r.openResumables('ten_b', T0)).toEqual({ count: 1, lengthBytes: 11 });
    });

    it('refuses an upload past the open count or the storage its tenant has left, counting only unexpired ones', async () => {
      const caps = { maxOpen: 2, storageLimitBytes: 1000 };
      const sized = (id: string, lengthBytes: number, expiresAt = T0 + 86_400_000) => ({
        ...upload(id, 'ten_full', expiresAt),
        lengthBytes,
      });
      // 900 stored: 100 left.
      expect(await r.createResumable(sized('art_1', 101), caps)).toBe('storage_full');
      expect(await r.createResumable(sized('art_1', 60, T0 + 1), caps)).toBe('created');
      expect(await r.createResumable(sized('art_2', 41), caps)).toBe('storage_full');
      expect(await r.createResumable(sized('art_2', 40), caps)).toBe('created');
      expect(await r.createResumable(sized('art_3', 0), caps)).toBe('too_many');
      // Once the first has expired (at T0 + 1), its place and its bytes are free again.
      expect(await r.createResumable({ ...sized('art_3', 60), createdAt: T0 + 1 }, caps)).toBe('created');
      expect(await r.getResumable('ten_full', 'art_3')).not.toBeNull();
      // Another tenant's uploads count for it alone.
      expect(await r.createResumable({ ...upload('art_4', 'ten_a'), lengthBytes: 10 }, caps)).toBe('created');
    });

    it('concurrent creations on two connections never pass a cap together', async () => {
      const peer = await openPeer();
      try {
        const race = (prefix: string, tenantId: string, lengthBytes: number, caps: ResumableCaps) =>
          Promise.all(
            Array.from({ length: 12 }, (_, i) =>
              (i % 2 ? peer.resumables : r).createResumable(
                { ...upload(`${prefix}_${i}`, tenantId), lengthBytes },
                caps,
              ),
            ),
          );
        const byCount = await race('art_n', 'ten_a', 1, { maxOpen: 5, storageLimitBytes: 1000 });
        expect(byCount.filter((x) => x === 'created')).toHaveLength(5);
        expect(byCount.filter((x) => x === 'too_many')).toHaveLength(7);
        // 100 bytes left, 30 each: three fit.
        const byBytes = await race('art_s', 'ten_full', 30, { maxOpen: 100, storageLimitBytes: 1000 });
        expect(byBytes.filter((x) => x === 'created')).toHaveLength(3);
        expect(await r.openResumables('ten_a', T0)).toEqual({ count: 5, lengthBytes: 5 });
        expect(await r.openResumables('ten_full', T0)).toEqual({ count: 3, lengthBytes: 90 });
      } finally {
        await peer.close();
      }
    });

    it('does not claim an expired upload a request still holds', async () => {
      await r.createResumable(upload('art_1', 'ten_a', T0 + 1000), NO_CAPS);
      await r.leaseResumable('ten_a', 'art_1', 'owner-a', T0, T0 + 8000);
      expect(await r.claimExpiredResumables('sweeper', T0 + 5000, T0 + 65_000, 10)).toEqual([]);
      expect((await r.claimExpiredResumables('sweeper', T0 + 8000, T0 + 68_000, 10)).map((x) => x.id)).toEqual([
        'art_1',
      ]);
    });

    it('deletes for its tenant only, and claims the expired oldest first, each once until its claim lapses', async () => {
      await r.createResumable(upload('art_1', 'ten_a', T0 + 3000), NO_CAPS);
      await r.createResumable(upload('art_2', 'ten_a', T0 + 1000), NO_CAPS);
      await r.createResumable(upload('art_3', 'ten_b', T0 + 9000), NO_CAPS);
      const first = await r.claimExpiredResumables('sweeper-1', T0 + 5000, T0 + 6000, 1);
      expect(first).toEqual([expect.objectContaining({ id: 'art_2', leaseOwner: 'sweeper-1', leaseUntil: T0 + 6000 })]);
      expect((await r.claimExpiredResumables('sweeper-2', T0 + 5000, T0 + 6000, 10)).map((x) => x.id)).toEqual([
        'art_1',
      ]);
      // Claimed: not claimed again, nor leased by a request, until the claim lapses.
      expect(await r.claimExpiredResumables('sweeper-3', T0 + 5999, T0 + 7000, 10)).toEqual([]);
      expect(await r.leaseResumable('ten_a', 'art_2', 'request', T0 + 5999, T0 + 7000)).toBe('held');
      expect(await r.deleteResumable('ten_b', 'art_1')).toBe(false);
      expect(await r.deleteResumable('ten_a', 'art_1')).toBe(true);
      expect(await r.deleteResumable('ten_a', 'art_1')).toBe(false);
      expect((await r.claimExpiredResumables('sweeper-3', T0 + 10_000, T0 + 11_000, 10)).map((x) => x.id)).toEqual([
        'art_2',
        'art_3',
      ]);
    });

    it('sweepers claiming at once on two connections split the expired uploads, none twice', async () => {
      for (let i = 0; i < 30; i++) await r.createResumable(upload(`art_${i}`, 'ten_a', T0 + i), NO_CAPS);
      const peer = await openPeer();
      try {
        const claims = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? peer.resumables : r).claimExpiredResumables(`sweeper-${i}`, T0 + 100, T0 + 60_000, 10),
          ),
        );
        const ids = claims.flat().map((x) => x.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.sort()).toEqual(Array.from({ length: 30 }, (_, i) => `art_${i}`).sort());
      } finally {
        await peer.close();
      }
    });
  });
}
