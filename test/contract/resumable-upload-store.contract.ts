import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MigrationResult } from '../../src/ports/metadata-store.js';
import type { ResumableUploadStore } from '../../src/ports/resumable-upload-store.js';

/** The ResumableUploadStore contract, run by every metadata engine (SQLite, PostgreSQL). */
export function resumableUploadStoreContract(
  name: string,
  make: () => Promise<{
    store: { migrate(): Promise<MigrationResult> };
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
      ({ resumables: r, openPeer, cleanup } = made);
    });
    afterEach(async () => cleanup());

    it('creates an upload at offset 0, visible to its tenant only', async () => {
      await r.createResumable(upload('art_1'));
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
      await r.createResumable(upload('art_1'));
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
      await r.createResumable(upload('art_1'));
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
      await r.createResumable(upload('art_1'));
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
      await r.createResumable(upload('art_1', 'ten_a', T0 + 1000));
      await r.leaseResumable('ten_a', 'art_1', 'owner-a', T0, T0 + 15_000);
      expect(await r.appendResumable('art_1', 'owner-a', 0, piece(0, 10), T0 + 1000)).toBe(false);
      expect(await r.appendResumable('art_1', 'owner-a', 0, piece(0, 10), T0 + 999)).toBe(true);
    });

    it('counts a tenant’s unexpired uploads and their lengths', async () => {
      expect(await r.openResumables('ten_a', T0)).toEqual({ count: 0, lengthBytes: 0 });
      await r.createResumable({ ...upload('art_1'), lengthBytes: 5 * 1024 ** 3 });
      await r.createResumable({ ...upload('art_2', 'ten_a', T0 + 500), lengthBytes: 7 });
      await r.createResumable({ ...upload('art_3', 'ten_b'), lengthBytes: 11 });
      expect(await r.openResumables('ten_a', T0)).toEqual({ count: 2, lengthBytes: 5 * 1024 ** 3 + 7 });
      expect(await r.openResumables('ten_a', T0 + 500)).toEqual({ count: 1, lengthBytes: 5 * 1024 ** 3 });
      expect(await r.openResumables('ten_b', T0)).toEqual({ count: 1, lengthBytes: 11 });
    });

    it('does not list an expired upload a request still holds', async () => {
      await r.createResumable(upload('art_1', 'ten_a', T0 + 1000));
      await r.leaseResumable('ten_a', 'art_1', 'owner-a', T0, T0 + 8000);
      expect(await r.listExpiredResumables(T0 + 5000, 10)).toEqual([]);
      expect((await r.listExpiredResumables(T0 + 8000, 10)).map((x) => x.id)).toEqual(['art_1']);
    });

    it('deletes for its tenant only, and lists the expired oldest first', async () => {
      await r.createResumable(upload('art_1', 'ten_a', T0 + 3000));
      await r.createResumable(upload('art_2', 'ten_a', T0 + 1000));
      await r.createResumable(upload('art_3', 'ten_b', T0 + 9000));
      expect((await r.listExpiredResumables(T0 + 5000, 10)).map((x) => x.id)).toEqual(['art_2', 'art_1']);
      expect((await r.listExpiredResumables(T0 + 5000, 1)).map((x) => x.id)).toEqual(['art_2']);
      expect(await r.deleteResumable('ten_b', 'art_1')).toBe(false);
      expect(await r.deleteResumable('ten_a', 'art_1')).toBe(true);
      expect(await r.deleteResumable('ten_a', 'art_1')).toBe(false);
      expect((await r.listExpiredResumables(T0 + 10_000, 10)).map((x) => x.id)).toEqual(['art_2', 'art_3']);
    });
  });
}
