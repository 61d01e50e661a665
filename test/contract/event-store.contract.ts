import { beforeEach, describe, expect, it } from 'vitest';
import { insertArtifact } from '../../src/adapters/sql/artifact-writes.js';
import type { SqlDriver } from '../../src/adapters/sql/runner.js';
import type { EventRow, MetadataStore, TenantRow } from '../../src/ports/metadata-store.js';
import { DAY, type MakeMetadataStore, metadataFixture, PIN_WRITER, T0, UNLIMITED } from './metadata-fixture.js';

/**
 * The EventStore contract: every change the metadata ports make records its event in the same
 * transaction, numbered 1, 2, 3, … per tenant; a change that is refused or rolls back records
 * none; reads never cross tenants; old events are swept. On each adapter (SQLite, PostgreSQL).
 */
export function eventStoreContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`EventStore contract: ${name}`, () => {
    const { state, row, put, link, page } = metadataFixture(makeStore);
    let store: MetadataStore;
    let A: TenantRow;
    let B: TenantRow;
    beforeEach(() => {
      ({ store, A, B } = state);
    });

    const feed = (tenantId: string, after = 0, more: Partial<Parameters<MetadataStore['listEvents']>[1]> = {}) =>
      store.listEvents(tenantId, { after, limit: 200, ...more });
    const kinds = (events: EventRow[]) => events.map((e) => `${e.seq} ${e.type}`);

    it('records each change of an artifact, a session, a page and a link, numbered in order', async () => {
      const a = await put(row(A.id, { sessionId: 'run-1' }));
      expect(await store.sealSession(A.id, 'run-1', T0 + 1)).not.toBeNull();
      await store.sealSession(A.id, 'run-1', T0 + 2); // already sealed: no change, no event
      const b = await put(row(A.id, { expiresAt: T0 + 10 }));
      const p = page(b, { passwordHash: '$argon2id$secret', access: 'password' });
      await store.upsertPage(p, T0 + 3);
      await store.upsertPage({ ...p, title: 'New title' }, T0 + 4);
      await store.unpublishPage(A.id, p.slug, T0 + 5);
      await store.unpublishPage(A.id, p.slug, T0 + 5); // already offline
      await store.upsertPage(p, T0 + 6);
      await store.takeDownPage(p.slug, T0 + 7);
      await store.takeDownPage(p.slug, T0 + 7);
      const l = link(a);
      expect(await store.createLink(l, 10, T0 + 8)).toBe(true);
      expect(await store.revokeLink(A.id, l.id, T0 + 9)).toBe(true);
      expect(await store.revokeLink(A.id, l.id, T0 + 9)).toBe(true); // again: same answer, no event
      const c = await put(row(A.id));
      await store.upsertPage(page(c), T0 + 10);
      await store.softDeleteArtifact(A.id, c.id, T0 + 11);
      await store.softDeleteArtifact(A.id, c.id, T0 + 11);
      expect(await store.expireArtifacts(T0 + 20, 100)).toBe(1);
      expect(await store.purgeArtifacts(T0 + 30, T0 + 30, 100, T0 + 40)).toBe(2);

      const events = await feed(A.id);
      expect(kinds(events)).toEqual([
        '1 artifact.created',
        '2 session.sealed',
        '3 artifact.created',
        '4 page.published',
        '5 page.updated',
        '6 page.unpublished',
        '7 page.published',
        '8 page.taken_down',
        '9 link.created',
        '10 link.revoked',
        '11 artifact.created',
        '12 page.published',
        '13 artifact.deleted',
        '14 page.unpublished',
        '15 artifact.expired',
        '16 artifact.purged',
        '17 artifact.purged',
      ]);
      const at = (seq: number) => events[seq - 1]!;
      expect(at(1).subject).toMatchObject({ id: a.id, status: 'active', sessionId: 'run-1' });
      expect(at(1)).toMatchObject({ tenantId: A.id, sessionId: 'run-1', createdAt: T0 });
      expect(at(2).subject).toMatchObject({ sessionId: 'run-1', sealedAt: T0 + 1, artifactCount: 1 });
      expect(at(2).createdAt).toBe(T0 + 1);
      expect(at(5).subject).toMatchObject({ slug: p.slug, title: 'New title', live: true });
      expect(at(8).subject).toMatchObject({ live: false, takenDownAt: T0 + 7 });
      expect(at(9).subject).toMatchObject({ id: l.id, artifactId: a.id, revokedAt: null });
      expect(at(9).sessionId).toBe('run-1');
      expect(at(10).subject).toMatchObject({ id: l.id, revokedAt: T0 + 9 });
      expect(at(13).subject).toMatchObject({ id: c.id, status: 'deleted', deletedAt: T0 + 11 });
      expect(at(15).subject).toMatchObject({ id: b.id, status: 'expired' });
      expect(at(16).createdAt).toBe(T0 + 40);
      // A page's password hash never enters the feed.
      for (const e of events) expect(JSON.stringify(e.subject)).not.toContain('argon2');
      expect((await store.latestSeqs([A.id, B.id])).get(A.id)).toBe(17);
    });

    it('records a session link created and its first revoke, and nothing for one refused by the cap', async () => {
      const a = await put(row(A.id, { sessionId: 'run-7' }));
      const sl = {
        id: `lnk_${'S'.repeat(20)}`,
        tenantId: A.id,
        sessionId: 'run-7',
        createdAt: T0 + 1,
        expiresAt: T0 + DAY,
        revokedAt: null,
      };
      expect(await store.createSessionLink(sl, 10, T0 + 1)).toBe(true);
      // The cap counts both kinds: with one artifact link a cap of 2 is full.
      expect(await store.createLink(link(a), 10, T0 + 2)).toBe(true);
      const refused = { ...sl, id: `lnk_${'R'.repeat(20)}` };
      expect(await store.createSessionLink(refused, 2, T0 + 3)).toBe(false);
      expect(await store.revokeLink(A.id, sl.id, T0 + 4)).toBe(true);
      expect(await store.revokeLink(A.id, sl.id, T0 + 5)).toBe(true); // again: same answer, no event
      expect(await store.revokeLink(B.id, sl.id, T0 + 5)).toBe(false); // not B's: no change, no event
      const events = await feed(A.id);
      expect(kinds(events)).toEqual([
        '1 artifact.created',
        '2 session_link.created',
        '3 link.created',
        '4 session_link.revoked',
      ]);
      expect(events[1]).toMatchObject({ sessionId: 'run-7', createdAt: T0 + 1, subject: { ...sl } });
      expect(events[3]).toMatchObject({
        sessionId: 'run-7',
        createdAt: T0 + 4,
        subject: { id: sl.id, revokedAt: T0 + 4 },
      });
      expect(await feed(B.id)).toEqual([]);
      expect((await feed(A.id, 0, { sessionId: 'run-7', types: ['session_link.revoked'] })).map((e) => e.seq)).toEqual([
        4,
      ]);
    });

    it('records nothing for a pending upload until it becomes active, nor for purging an abandoned one', async () => {
      const pending = row(A.id, { status: 'pending' });
      await store.insertArtifact({ artifact: pending, storageLimitBytes: UNLIMITED });
      const abandoned = row(A.id, { status: 'pending' });
      await store.insertArtifact({ artifact: abandoned, storageLimitBytes: UNLIMITED });
      expect(await feed(A.id)).toEqual([]);
      await store.pinBlob(A.id, pending.contentHash, pending.sizeBytes, T0, PIN_WRITER);
      await store.activateArtifact(A.id, pending.id, UNLIMITED, T0 + 5);
      await store.activateArtifact(A.id, pending.id, UNLIMITED, T0 + 6); // not pending any more
      expect(await store.purgePendingUploads(T0 + DAY, 100)).toBe(1);
      const events = await feed(A.id);
      expect(kinds(events)).toEqual(['1 artifact.created']);
      expect(events[0]!.subject).toMatchObject({ id: pending.id, status: 'active', createdAt: T0 + 5 });
    });

    it('keeps each tenant’s feed to itself, numbered on its own', async () => {
      await put(row(A.id));
      await put(row(B.id, { sessionId: 'theirs' }));
      await put(row(A.id, { sessionId: 'theirs' }));
      expect(kinds(await feed(A.id))).toEqual(['1 artifact.created', '2 artifact.created']);
      expect(kinds(await feed(B.id))).toEqual(['1 artifact.created']);
      for (const e of await feed(A.id)) expect(e.tenantId).toBe(A.id);
      expect((await feed(A.id, 0, { sessionId: 'theirs' })).map((e) => e.subject.tenantId)).toEqual([A.id]);
      const seqs = await store.latestSeqs([A.id, B.id, 'ten_nobody']);
      expect([...seqs.entries()]).toEqual([
        [A.id, 2],
        [B.id, 1],
        ['ten_nobody', 0],
      ]);
    });

    it('reads after a position, by types and by session, oldest first, a page at a time', async () => {
      for (let i = 0; i < 5; i++) await put(row(A.id, { sessionId: i % 2 ? 'odd' : 'even', createdAt: T0 + i }));
      await store.sealSession(A.id, 'odd', T0 + 10);
      expect((await feed(A.id, 2, { limit: 2 })).map((e) => e.seq)).toEqual([3, 4]);
      expect((await feed(A.id, 0, { sessionId: 'odd' })).map((e) => e.seq)).toEqual([2, 4, 6]);
      expect((await feed(A.id, 0, { types: ['session.sealed'] })).map((e) => e.seq)).toEqual([6]);
      expect(
        (await feed(A.id, 3, { types: ['artifact.created', 'session.sealed'], sessionId: 'odd' })).map((e) => e.seq),
      ).toEqual([4, 6]);
      expect(await feed(A.id, 6)).toEqual([]);
    });

    it('records nothing for a refused change, and the next change takes the next number', async () => {
      await put(row(A.id, { sessionId: 'sealed' }));
      await store.sealSession(A.id, 'sealed', T0 + 1);
      const refused = row(A.id, { sessionId: 'sealed' });
      await store.pinBlob(A.id, refused.contentHash, refused.sizeBytes, T0, PIN_WRITER);
      await expect(store.insertArtifact({ artifact: refused, storageLimitBytes: UNLIMITED })).rejects.toMatchObject({
        code: 'session_sealed',
      });
      const big = row(A.id, { sizeBytes: 1000 });
      await store.pinBlob(A.id, big.contentHash, big.sizeBytes, T0, PIN_WRITER);
      await expect(store.insertArtifact({ artifact: big, storageLimitBytes: 500 })).rejects.toMatchObject({
        code: 'quota_exceeded',
      });
      await put(row(A.id));
      expect(kinds(await feed(A.id))).toEqual(['1 artifact.created', '2 session.sealed', '3 artifact.created']);
    });

    it('a transaction that rolls back after its event was written leaves neither the change nor the event', async () => {
      const sql = (store as unknown as { sql: SqlDriver }).sql;
      const a = row(A.id);
      await store.pinBlob(A.id, a.contentHash, a.sizeBytes, T0, PIN_WRITER);
      const boom = new Error('boom after the event');
      await expect(
        sql.write(function* () {
          const result = yield* insertArtifact(sql.dialect, { artifact: a, storageLimitBytes: UNLIMITED });
          expect(result.kind).toBe('created');
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await store.getArtifact(A.id, a.id)).toBeNull();
      expect(await feed(A.id)).toEqual([]);
      expect((await store.latestSeqs([A.id])).get(A.id)).toBe(0);
      await put(row(A.id));
      expect(kinds(await feed(A.id))).toEqual(['1 artifact.created']);
    });

    it('numbers concurrent changes, from two stores on one database, without a gap or a repeat', async () => {
      const peer = state.openPeer();
      try {
        const puts: Promise<unknown>[] = [];
        for (let i = 0; i < 12; i++) {
          const r = row(A.id, { createdAt: T0 + i });
          const s = i % 2 ? peer : store;
          puts.push(
            s
              .pinBlob(A.id, r.contentHash, r.sizeBytes, T0, PIN_WRITER)
              .then(() => s.insertArtifact({ artifact: r, storageLimitBytes: UNLIMITED })),
          );
        }
        await Promise.all(puts);
        const events = await feed(A.id);
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
        expect(new Set(events.map((e) => e.subject.id)).size).toBe(12);
        expect((await peer.latestSeqs([A.id])).get(A.id)).toBe(12);
      } finally {
        await peer.close();
      }
    });

    it('writes asked for in one turn: each committed one has its events, the refused one none, no gap', async () => {
      // On SQLite these share one group commit, which writes their events together at its end.
      const gone = await put(row(A.id, { sessionId: 'run-1' }));
      await put(row(A.id, { sessionId: 'sealed' }));
      await store.sealSession(A.id, 'sealed', T0 + 1);
      const fresh = [row(A.id, { sessionId: 'run-1' }), row(A.id, { sessionId: 'sealed' }), row(B.id)];
      for (const r of fresh) await store.pinBlob(r.tenantId, r.contentHash, r.sizeBytes, T0, PIN_WRITER);
      const settled = await Promise.allSettled([
        store.insertArtifact({ artifact: fresh[0]!, storageLimitBytes: UNLIMITED }),
        store.insertArtifact({ artifact: fresh[1]!, storageLimitBytes: UNLIMITED }),
        store.softDeleteArtifact(A.id, gone.id, T0 + 2),
        store.insertArtifact({ artifact: fresh[2]!, storageLimitBytes: UNLIMITED }),
      ]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      const later = (await feed(A.id, 3)).map((e) => `${e.type} ${e.subject.id}`);
      expect(later.sort()).toEqual([`artifact.created ${fresh[0]!.id}`, `artifact.deleted ${gone.id}`].sort());
      expect((await feed(A.id)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(kinds(await feed(B.id))).toEqual(['1 artifact.created']);
      expect((await store.latestSeqs([A.id, B.id])).get(A.id)).toBe(5);
    });

    it('purgeEvents drops events older than the cutoff, in batches, and nothing newer', async () => {
      for (let i = 0; i < 3; i++) await put(row(A.id, { createdAt: T0 + i * DAY }));
      await put(row(B.id, { createdAt: T0 }));
      expect(await store.purgeEvents(T0 + DAY + 1, 1)).toBe(1);
      expect(await store.purgeEvents(T0 + DAY + 1, 10)).toBe(2);
      expect(await store.purgeEvents(T0 + DAY + 1, 10)).toBe(0);
      expect((await feed(A.id)).map((e) => e.seq)).toEqual([3]);
      expect(await feed(B.id)).toEqual([]);
      // The numbering goes on from the head, not from what is left.
      await put(row(A.id, { createdAt: T0 + 5 * DAY }));
      expect((await feed(A.id)).map((e) => e.seq)).toEqual([3, 4]);
    });
  });
}
