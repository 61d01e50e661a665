import { beforeEach, describe, expect, it } from 'vitest';
import type {
  ArtifactRow,
  InsertArtifactResult,
  MetadataStore,
  PageRow,
  TenantRow,
} from '../../src/ports/metadata-store.js';
import { DAY, HOUR, type MakeMetadataStore, metadataFixture, PIN_WRITER, T0, UNLIMITED } from './metadata-fixture.js';

/**
 * The ArtifactStore contract: storage accounting, idempotent inserts, pending rows, sessions,
 * lists, tenant isolation, soft deletes and expiry.
 * Exercised through the port only, on each adapter (SQLite, PostgreSQL), from the shared fixture
 * (metadata-fixture.ts): an empty database, migrated as every start does, with tenants A and B.
 */
export function artifactStoreContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`ArtifactStore contract: ${name}`, () => {
    const { state, sha, row, put, list, ids, storage, link, page } = metadataFixture(makeStore);
    let store: MetadataStore;
    let A: TenantRow;
    let B: TenantRow;
    beforeEach(() => {
      ({ store, A, B } = state);
    });

    describe('storage accounting', () => {
      it('counts bytes shared by two artifacts once, until the last one goes', async () => {
        const hash = sha('shared');
        const one = await put(row(A.id, { contentHash: hash, sizeBytes: 500 }));
        const two = await put(row(A.id, { contentHash: hash, sizeBytes: 500 }));
        expect(await storage(A)).toBe(500);
        expect(await store.blobIsLive(A.id, hash)).toBe(true);
        expect(await store.blobIsLive(B.id, hash)).toBe(false);

        await store.softDeleteArtifact(A.id, one.id, T0 + 1);
        expect(await storage(A)).toBe(500);
        expect(await store.blobIsLive(A.id, hash)).toBe(true);

        await store.softDeleteArtifact(A.id, two.id, T0 + 2);
        expect(await storage(A)).toBe(0);
        expect(await store.blobIsLive(A.id, hash)).toBe(false);
      });

      it('dedups per tenant: the same bytes cost each tenant once', async () => {
        const hash = sha('both');
        await put(row(A.id, { contentHash: hash, sizeBytes: 300 }));
        await put(row(B.id, { contentHash: hash, sizeBytes: 300 }));
        await put(row(A.id, { sizeBytes: 7 }));
        expect(await storage(A)).toBe(307);
        expect(await storage(B)).toBe(300);
      });

      it('refuses an over-quota insert and writes nothing', async () => {
        await put(row(A.id, { sizeBytes: 600 }), 1000);
        const big = row(A.id, { sizeBytes: 401, sessionId: 'sess-q' });
        await store.pinBlob(A.id, big.contentHash, big.sizeBytes, T0, PIN_WRITER);
        await expect(
          store.insertArtifact({
            artifact: big,
            storageLimitBytes: 1000,
            idempotency: { key: 'idem-q', notBefore: T0 - DAY, response: { status: 201, body: '{}' } },
          }),
        ).rejects.toMatchObject({ code: 'quota_exceeded' });
        expect(await store.getArtifact(A.id, big.id)).toBeNull();
        expect(await store.getSession(A.id, 'sess-q')).toBeNull();
        expect(await store.getIdempotency(A.id, 'idem-q', T0 - DAY)).toBeNull();
        expect(await storage(A)).toBe(600);
        expect(await store.blobIsLive(A.id, big.contentHash)).toBe(false);
        expect(await list(A.id)).toHaveLength(1);
      });

      it('accepts exactly reaching the limit, and bytes already live cost nothing', async () => {
        const first = await put(row(A.id, { sizeBytes: 600 }), 1000);
        await put(row(A.id, { sizeBytes: 400 }), 1000);
        expect(await storage(A)).toBe(1000);
        await put(row(A.id, { contentHash: first.contentHash, sizeBytes: 600 }), 1000);
        expect(await storage(A)).toBe(1000);
        await expect(
          store.insertArtifact({ artifact: row(A.id, { sizeBytes: 1 }), storageLimitBytes: 1000 }),
        ).rejects.toMatchObject({ code: 'quota_exceeded' });
      });

      it('pending rows are stored but invisible and not counted', async () => {
        const pending = row(A.id, { status: 'pending', sizeBytes: 5000, sessionId: 'sess-p' });
        await store.pinBlob(A.id, pending.contentHash, pending.sizeBytes, T0, PIN_WRITER);
        const result = await store.insertArtifact({ artifact: pending, storageLimitBytes: 10 });
        expect(result.kind).toBe('created');
        expect(await store.getArtifact(A.id, pending.id)).toMatchObject({ status: 'pending' });
        expect(await list(A.id)).toEqual([]);
        expect(await storage(A)).toBe(0);
        expect(await store.blobIsLive(A.id, pending.contentHash)).toBe(false);
        expect((await store.getSession(A.id, 'sess-p'))?.artifactCount ?? 0).toBe(0);
      });
    });

    describe('the write of a blob’s bytes (pinBlob)', () => {
      const writer = (owner: string, until = T0 + HOUR) => ({ owner, until });

      it('goes to one upload at a time, until given back, lapsed, or ended by an artifact that references the bytes', async () => {
        const h = sha('new bytes');
        expect(await store.pinBlob(A.id, h, 100, T0, writer('w1', T0 + 10))).toBe('write');
        expect(await store.pinBlob(A.id, h, 100, T0 + 1, writer('w2'))).toBe('writing');
        // Only its owner gives a write back.
        await store.releaseBlobWrite(A.id, h, 'w2');
        expect(await store.pinBlob(A.id, h, 100, T0 + 2, writer('w2'))).toBe('writing');
        await store.releaseBlobWrite(A.id, h, 'w1');
        expect(await store.pinBlob(A.id, h, 100, T0 + 3, writer('w2', T0 + 20))).toBe('write');
        // Lapsed at its `until`: another may take it over (its owner died, say).
        expect(await store.pinBlob(A.id, h, 100, T0 + 19, writer('w3'))).toBe('writing');
        expect(await store.pinBlob(A.id, h, 100, T0 + 20, writer('w3'))).toBe('write');
        // Another tenant's bytes are its own.
        expect(await store.pinBlob(B.id, h, 100, T0 + 20, writer('w4'))).toBe('write');
        // An active artifact referencing the bytes ends the write: they are stored, for everyone.
        const a = row(A.id, { contentHash: h, createdAt: T0 + 21 });
        expect((await store.insertArtifact({ artifact: a, storageLimitBytes: UNLIMITED })).kind).toBe('created');
        expect(await store.pinBlob(A.id, h, 100, T0 + 22, writer('w5'))).toBe('stored');
        // No reference left: the next upload writes (or finds) them, as it would new bytes.
        await store.softDeleteArtifact(A.id, a.id, T0 + 23);
        expect(await store.pinBlob(A.id, h, 100, T0 + 24, writer('w6'))).toBe('write');
      });

      it('activation of a pending row ends it too', async () => {
        const h = sha('landed bytes');
        const p = row(A.id, { status: 'pending', contentHash: '', sizeBytes: 0 });
        await store.insertArtifact({ artifact: p, storageLimitBytes: UNLIMITED });
        expect(await store.pinBlob(A.id, h, 50, T0, writer('w1'))).toBe('write');
        expect(await store.setPendingContent(A.id, p.id, h, 50)).toBe(true);
        await store.activateArtifact(A.id, p.id, UNLIMITED, T0 + 1);
        expect(await store.pinBlob(A.id, h, 50, T0 + 2, writer('w2'))).toBe('stored');
        // Over, not only hidden by the reference: once that goes, the next upload may write.
        await store.softDeleteArtifact(A.id, p.id, T0 + 3);
        expect(await store.pinBlob(A.id, h, 50, T0 + 4, writer('w3'))).toBe('write');
      });

      it('of concurrent pins of new bytes on two connections, exactly one gets the write', async () => {
        const peer = state.openPeer();
        try {
          const h = sha('raced bytes');
          const pins = await Promise.all(
            Array.from({ length: 8 }, (_, i) => (i % 2 ? peer : store).pinBlob(A.id, h, 100, T0, writer(`w${i}`))),
          );
          expect(pins.filter((p) => p === 'write')).toHaveLength(1);
          expect(pins.filter((p) => p === 'writing')).toHaveLength(7);
        } finally {
          await peer.close();
        }
      });
    });

    describe('insertArtifact and idempotency', () => {
      const response = (n: number) => ({ status: 201, body: JSON.stringify({ artifact_id: `n${n}` }) });

      it('round-trips every field', async () => {
        const a = row(A.id, {
          filename: 'report final.md',
          contentType: 'text/markdown',
          metadata: { a: 'x', n: 1.5, nested: { deep: [1, 2] }, flag: false, none: null },
          sessionId: 's1',
          agentId: 'agent-7',
          expiresAt: T0 + DAY,
        });
        const result = await store.insertArtifact({ artifact: a, storageLimitBytes: UNLIMITED });
        expect(result).toEqual({ kind: 'created', artifact: a });
        expect(await store.getArtifact(A.id, a.id)).toEqual(a);
        expect(await store.getArtifactAnyTenant(a.id)).toEqual({ artifact: a, tenant: await store.getTenant(A.id) });
        expect(await store.getArtifactAnyTenant('art_unknown0000000')).toBeNull();
      });

      it('refuses metadata no engine may store (U+0000, an unpaired surrogate) and writes nothing', async () => {
        for (const metadata of [{ note: 'nul \u0000 inside' }, { ['key\ud800']: 1 }, { deep: ['\udc00'] }]) {
          const a = row(A.id, { metadata });
          await expect(store.insertArtifact({ artifact: a, storageLimitBytes: UNLIMITED })).rejects.toMatchObject({
            code: 'invalid_request',
          });
          expect(await store.getArtifact(A.id, a.id)).toBeNull();
        }
      });

      it('replays a recent record without writing a second artifact', async () => {
        const first = row(A.id);
        const idem = { key: 'k1', notBefore: T0 - DAY, response: response(1) };
        await store.pinBlob(A.id, first.contentHash, first.sizeBytes, T0, PIN_WRITER);
        expect(
          (await store.insertArtifact({ artifact: first, storageLimitBytes: UNLIMITED, idempotency: idem })).kind,
        ).toBe('created');
        const second = row(A.id, { createdAt: T0 + 1 });
        const again = await store.insertArtifact({
          artifact: second,
          storageLimitBytes: UNLIMITED,
          idempotency: { ...idem, response: response(2) },
        });
        expect(again).toEqual({ kind: 'replay', response: response(1) });
        expect(await store.getArtifact(A.id, second.id)).toBeNull();
        expect(ids(await list(A.id))).toEqual([first.id]);
        expect(await store.getIdempotency(A.id, 'k1', T0 - DAY)).toEqual(response(1));
        expect(await store.getIdempotency(A.id, 'k1', T0)).toBeNull();
        expect(await store.getIdempotency(B.id, 'k1', T0 - DAY)).toBeNull();
      });

      it('replaces a record older than notBefore', async () => {
        const old = row(A.id, { createdAt: T0 });
        await store.insertArtifact({
          artifact: old,
          storageLimitBytes: UNLIMITED,
          idempotency: { key: 'k', notBefore: T0 - DAY, response: response(1) },
        });
        const fresh = row(A.id, { createdAt: T0 + 2 * DAY });
        const result = await store.insertArtifact({
          artifact: fresh,
          storageLimitBytes: UNLIMITED,
          // A record exactly at notBefore is not newer than it: replaced, not replayed.
          idempotency: { key: 'k', notBefore: T0, response: response(2) },
        });
        expect(result.kind).toBe('created');
        expect(await store.getIdempotency(A.id, 'k', T0 + DAY)).toEqual(response(2));
        expect(ids(await list(A.id, { now: T0 + 2 * DAY }))).toEqual([fresh.id, old.id]);
      });

      it('keys are per tenant', async () => {
        const idem = { key: 'same', notBefore: T0 - DAY, response: response(1) };
        const a = await store.insertArtifact({ artifact: row(A.id), storageLimitBytes: UNLIMITED, idempotency: idem });
        const b = await store.insertArtifact({ artifact: row(B.id), storageLimitBytes: UNLIMITED, idempotency: idem });
        expect([a.kind, b.kind]).toEqual(['created', 'created']);
      });

      it('concurrent duplicates with one key yield exactly one artifact', async () => {
        const candidates = Array.from({ length: 6 }, (_, i) =>
          row(A.id, { contentHash: sha('same-bytes'), createdAt: T0 + i }),
        );
        await store.pinBlob(A.id, sha('same-bytes'), 100, T0, PIN_WRITER);
        const results: InsertArtifactResult[] = await Promise.all(
          candidates.map((artifact, i) =>
            store.insertArtifact({
              artifact,
              storageLimitBytes: UNLIMITED,
              idempotency: { key: 'race', notBefore: T0 - DAY, response: response(i) },
            }),
          ),
        );
        const created = results.filter((r) => r.kind === 'created');
        expect(created).toHaveLength(1);
        const winner = candidates.findIndex((c) => c.id === (created[0] as { artifact: ArtifactRow }).artifact.id);
        for (const r of results) if (r.kind === 'replay') expect(r.response).toEqual(response(winner));
        expect(await list(A.id, { now: T0 })).toHaveLength(1);
        expect(await storage(A)).toBe(100);
      });
    });

    describe('presigned uploads (pending rows)', () => {
      it('keeps a pending row out of lists, storage and sessions until it is activated', async () => {
        const p = row(A.id, {
          status: 'pending',
          contentHash: '',
          sizeBytes: 0,
          sessionId: 's-pend',
          metadata: { k: 'v' },
        });
        const result = await store.insertArtifact({ artifact: p, storageLimitBytes: UNLIMITED });
        expect(result.kind).toBe('created');
        expect(await list(A.id)).toEqual([]);
        expect(await storage(A)).toBe(0);
        expect(await store.getSession(A.id, 's-pend')).toBeNull();
        expect((await store.getArtifact(A.id, p.id))?.status).toBe('pending');
      });

      it('records the arrived content, then activates with accounting, session and metadata index', async () => {
        const p = row(A.id, {
          status: 'pending',
          contentHash: '',
          sizeBytes: 0,
          sessionId: 's-pend',
          metadata: { k: 'v' },
          expiresAt: T0 + DAY,
        });
        await store.insertArtifact({ artifact: p, storageLimitBytes: UNLIMITED });
        const hash = sha('landed');
        expect(await store.setPendingContent(A.id, p.id, hash, 500)).toBe(true);
        expect(await store.pinBlob(A.id, hash, 500, T0, PIN_WRITER)).toBe('write');
        const active = await store.activateArtifact(A.id, p.id, UNLIMITED, T0 + HOUR);
        expect(active).toMatchObject({
          status: 'active',
          contentHash: hash,
          sizeBytes: 500,
          createdAt: T0 + HOUR,
          expiresAt: T0 + DAY + HOUR,
        });
        expect(await storage(A)).toBe(500);
        expect((await store.getSession(A.id, 's-pend'))?.artifactCount).toBe(1);
        expect(ids(await list(A.id, { now: T0 + HOUR, metadata: [{ key: 'k', value: 'v' }] }))).toEqual([p.id]);
        // Activating again changes nothing: completion is idempotent.
        expect(await store.activateArtifact(A.id, p.id, UNLIMITED, T0 + 2 * HOUR)).toMatchObject({
          createdAt: T0 + HOUR,
        });
        expect(await storage(A)).toBe(500);
        expect(await store.setPendingContent(A.id, p.id, sha('other'), 1)).toBe(false);
      });

      it('refuses activation over the storage limit and leaves the row pending', async () => {
        const p = row(A.id, { status: 'pending', contentHash: '', sizeBytes: 0 });
        await store.insertArtifact({ artifact: p, storageLimitBytes: UNLIMITED });
        await store.setPendingContent(A.id, p.id, sha('big'), 1000);
        await store.pinBlob(A.id, sha('big'), 1000, T0, PIN_WRITER);
        await expect(store.activateArtifact(A.id, p.id, 999, T0)).rejects.toMatchObject({ code: 'quota_exceeded' });
        expect((await store.getArtifact(A.id, p.id))?.status).toBe('pending');
        expect(await storage(A)).toBe(0);
      });

      it('drops one pending row of its tenant, and nothing else', async () => {
        const p = row(A.id, { status: 'pending', contentHash: '', sizeBytes: 0 });
        await store.insertArtifact({ artifact: p, storageLimitBytes: UNLIMITED });
        const live = await put(row(A.id));
        expect(await store.dropPending(B.id, p.id)).toBe(false);
        expect(await store.dropPending(A.id, live.id)).toBe(false);
        expect(await store.dropPending(A.id, p.id)).toBe(true);
        expect(await store.getArtifact(A.id, p.id)).toBeNull();
        expect(await store.dropPending(A.id, p.id)).toBe(false);
        expect(await store.getArtifact(A.id, live.id)).toMatchObject({ status: 'active' });
      });

      it('activates only within the tenant and purges abandoned pending rows', async () => {
        const p = row(A.id, { status: 'pending', contentHash: '', sizeBytes: 0 });
        await store.insertArtifact({ artifact: p, storageLimitBytes: UNLIMITED });
        expect(await store.activateArtifact(B.id, p.id, UNLIMITED, T0)).toBeNull();
        expect(await store.setPendingContent(B.id, p.id, sha('x'), 1)).toBe(false);
        const live = await put(row(A.id));
        expect(await store.purgePendingUploads(T0, 10)).toBe(0);
        expect(await store.purgePendingUploads(T0 + 1, 10)).toBe(1);
        expect(await store.getArtifact(A.id, p.id)).toBeNull();
        expect(await store.getArtifact(A.id, live.id)).not.toBeNull();
      });
    });

    describe('sessions', () => {
      it('tracks count, first and last artifact times', async () => {
        await put(row(A.id, { sessionId: 's1', createdAt: T0 + 10 }));
        await put(row(A.id, { sessionId: 's1', createdAt: T0 + 30 }));
        const early = await put(row(A.id, { sessionId: 's1', createdAt: T0 + 5 }));
        expect(await store.getSession(A.id, 's1')).toEqual({
          tenantId: A.id,
          sessionId: 's1',
          artifactCount: 3,
          sealedAt: null,
          firstArtifactAt: T0 + 5,
          lastArtifactAt: T0 + 30,
        });
        await store.softDeleteArtifact(A.id, early.id, T0 + 40);
        expect(await store.getSession(A.id, 's1')).toMatchObject({ artifactCount: 2 });
        expect(await store.getSession(A.id, 'nope')).toBeNull();
        expect(await store.getSession(B.id, 's1')).toBeNull();
      });

      it('sealing is once, per tenant, and refuses later uploads with nothing written', async () => {
        await put(row(A.id, { sessionId: 's1' }));
        expect(await store.sealSession(A.id, 'nope', T0)).toBeNull();
        expect(await store.sealSession(B.id, 's1', T0)).toBeNull();
        expect(await store.sealSession(A.id, 's1', T0 + 1)).toMatchObject({ sealedAt: T0 + 1, artifactCount: 1 });
        expect(await store.sealSession(A.id, 's1', T0 + 2)).toMatchObject({ sealedAt: T0 + 1 });

        const late = row(A.id, { sessionId: 's1', createdAt: T0 + 3 });
        await store.pinBlob(A.id, late.contentHash, late.sizeBytes, T0, PIN_WRITER);
        const attempt = store.insertArtifact({
          artifact: late,
          storageLimitBytes: UNLIMITED,
          idempotency: { key: 'sealed', notBefore: T0 - DAY, response: { status: 201, body: '{}' } },
        });
        await expect(attempt).rejects.toMatchObject({
          code: 'session_sealed',
          message: 'Session s1 is sealed; it accepts no more uploads.',
        });
        expect(await store.getArtifact(A.id, late.id)).toBeNull();
        expect(await store.getIdempotency(A.id, 'sealed', T0 - DAY)).toBeNull();
        expect(await store.getSession(A.id, 's1')).toMatchObject({ artifactCount: 1, lastArtifactAt: T0 });
        expect(await storage(A)).toBe(100);
        // Another tenant's session of the same name is unaffected.
        await put(row(B.id, { sessionId: 's1' }));
      });

      it('lists by lastArtifactAt DESC, sessionId DESC with keyset pages and filters', async () => {
        await put(row(A.id, { sessionId: 'a', createdAt: T0 + 1 }));
        await put(row(A.id, { sessionId: 'b', createdAt: T0 + 2 }));
        await put(row(A.id, { sessionId: 'c', createdAt: T0 + 2 }));
        await put(row(A.id, { sessionId: 'd', createdAt: T0 + 3 }));
        await put(row(A.id, { sessionId: 'a', createdAt: T0 + 4 }));
        await put(row(B.id, { sessionId: 'zz', createdAt: T0 + 9 }));
        const names = (rows: { sessionId: string }[]) => rows.map((r) => r.sessionId);
        expect(names(await store.listSessions(A.id, { limit: 10 }))).toEqual(['a', 'd', 'c', 'b']);
        const first = await store.listSessions(A.id, { limit: 2 });
        expect(names(first)).toEqual(['a', 'd']);
        const last = first[1]!;
        const second = await store.listSessions(A.id, {
          limit: 2,
          after: { lastArtifactAt: last.lastArtifactAt, sessionId: last.sessionId },
        });
        expect(names(second)).toEqual(['c', 'b']);
        expect(
          names(await store.listSessions(A.id, { limit: 10, after: { lastArtifactAt: T0 + 2, sessionId: 'c' } })),
        ).toEqual(['b']);
        // Filters apply to firstArtifactAt, exclusively.
        expect(names(await store.listSessions(A.id, { limit: 10, createdAfter: T0 + 1 }))).toEqual(['d', 'c', 'b']);
        expect(names(await store.listSessions(A.id, { limit: 10, createdBefore: T0 + 2 }))).toEqual(['a']);
        expect(names(await store.listSessions(B.id, { limit: 10 }))).toEqual(['zz']);
      });
    });

    describe('listArtifacts', () => {
      it('orders createdAt DESC, id DESC, breaking ties by id', async () => {
        const rows = [
          await put(row(A.id, { id: 'art_b000000000000000', createdAt: T0 + 1 })),
          await put(row(A.id, { id: 'art_c000000000000000', createdAt: T0 + 1 })),
          await put(row(A.id, { id: 'art_a000000000000000', createdAt: T0 + 1 })),
          await put(row(A.id, { id: 'art_z000000000000000', createdAt: T0 })),
          await put(row(A.id, { id: 'art_0000000000000000', createdAt: T0 + 2 })),
        ];
        expect(ids(await list(A.id))).toEqual([
          'art_0000000000000000',
          'art_c000000000000000',
          'art_b000000000000000',
          'art_a000000000000000',
          'art_z000000000000000',
        ]);
        expect(rows).toHaveLength(5);
        expect(ids(await list(A.id, { limit: 2 }))).toEqual(['art_0000000000000000', 'art_c000000000000000']);
      });

      it('pages by keyset with no duplicates or gaps, ties included', async () => {
        for (let i = 0; i < 23; i++) await put(row(A.id, { createdAt: T0 + Math.floor(i / 4) }));
        const all = await list(A.id);
        expect(all).toHaveLength(23);
        const seen: string[] = [];
        let after: { createdAt: number; id: string } | undefined;
        for (;;) {
          const pageRows = await list(A.id, { limit: 5, ...(after ? { after } : {}) });
          seen.push(...ids(pageRows));
          if (pageRows.length < 5) break;
          const last = pageRows[pageRows.length - 1]!;
          after = { createdAt: last.createdAt, id: last.id };
        }
        expect(seen).toEqual(ids(all));
      });

      it('applies each filter', async () => {
        const s1 = await put(row(A.id, { sessionId: 's1', createdAt: T0 + 1 }));
        const ag = await put(row(A.id, { agentId: 'ag', createdAt: T0 + 2 }));
        const fn = await put(row(A.id, { filename: 'plan.md', createdAt: T0 + 3 }));
        const ct = await put(row(A.id, { contentType: 'image/png', createdAt: T0 + 4 }));
        const both = await put(row(A.id, { sessionId: 's1', agentId: 'ag', createdAt: T0 + 5 }));
        expect(ids(await list(A.id, { sessionId: 's1' }))).toEqual([both.id, s1.id]);
        expect(ids(await list(A.id, { agentId: 'ag' }))).toEqual([both.id, ag.id]);
        expect(ids(await list(A.id, { sessionId: 's1', agentId: 'ag' }))).toEqual([both.id]);
        expect(ids(await list(A.id, { filename: 'plan.md' }))).toEqual([fn.id]);
        expect(ids(await list(A.id, { contentType: 'image/png' }))).toEqual([ct.id]);
        expect(ids(await list(A.id, { createdAfter: T0 + 3 }))).toEqual([both.id, ct.id]);
        expect(ids(await list(A.id, { createdBefore: T0 + 2 }))).toEqual([s1.id]);
        expect(ids(await list(A.id, { createdAfter: T0 + 1, createdBefore: T0 + 4 }))).toEqual([fn.id, ag.id]);
        expect(ids(await list(A.id, { sessionId: 's1', after: { createdAt: both.createdAt, id: both.id } }))).toEqual([
          s1.id,
        ]);
        expect(await list(A.id, { sessionId: 'none' })).toEqual([]);
      });

      it('hides expired (at now), deleted and pending rows', async () => {
        const never = await put(row(A.id, { createdAt: T0 + 1 }));
        const later = await put(row(A.id, { createdAt: T0 + 2, expiresAt: T0 + HOUR }));
        const gone = await put(row(A.id, { createdAt: T0 + 3 }));
        await store.softDeleteArtifact(A.id, gone.id, T0 + 4);
        await store.insertArtifact({
          artifact: row(A.id, { status: 'pending', createdAt: T0 + 5 }),
          storageLimitBytes: 0,
        });
        expect(ids(await list(A.id, { now: T0 + HOUR - 1 }))).toEqual([later.id, never.id]);
        expect(ids(await list(A.id, { now: T0 + HOUR }))).toEqual([never.id]);
      });

      it('matches metadata by string or by the JSON text of numbers and booleans', async () => {
        const str = await put(row(A.id, { metadata: { v: '42', kind: 'x' }, createdAt: T0 + 1 }));
        const num = await put(row(A.id, { metadata: { v: 42, kind: 'y' }, createdAt: T0 + 2 }));
        const flt = await put(row(A.id, { metadata: { v: 1.5 }, createdAt: T0 + 3 }));
        const yes = await put(row(A.id, { metadata: { v: true }, createdAt: T0 + 4 }));
        const obj = await put(row(A.id, { metadata: { v: { a: 1 }, w: [1], n: null }, createdAt: T0 + 5 }));
        expect(ids(await list(A.id, { metadata: [{ key: 'v', value: '42' }] }))).toEqual([num.id, str.id]);
        expect(ids(await list(A.id, { metadata: [{ key: 'v', value: '1.5' }] }))).toEqual([flt.id]);
        expect(ids(await list(A.id, { metadata: [{ key: 'v', value: 'true' }] }))).toEqual([yes.id]);
        expect(await list(A.id, { metadata: [{ key: 'v', value: 'false' }] })).toEqual([]);
        expect(await list(A.id, { metadata: [{ key: 'v', value: '{"a":1}' }] })).toEqual([]);
        expect(await list(A.id, { metadata: [{ key: 'w', value: '[1]' }] })).toEqual([]);
        expect(await list(A.id, { metadata: [{ key: 'n', value: 'null' }] })).toEqual([]);
        expect(await list(A.id, { metadata: [{ key: 'V', value: '42' }] })).toEqual([]);
        expect(obj.metadata).toEqual((await store.getArtifact(A.id, obj.id))!.metadata);
      });

      it('combines two metadata filters with the other filters and the keyset', async () => {
        const rows: ArtifactRow[] = [];
        for (let i = 0; i < 8; i++) {
          rows.push(
            await put(
              row(A.id, {
                createdAt: T0 + i,
                sessionId: i % 2 === 0 ? 'even' : 'odd',
                metadata: { project: i < 6 ? 'apollo' : 'zeus', ...(i % 3 === 0 ? { type: 'transcript' } : {}) },
              }),
            ),
          );
        }
        const two = [
          { key: 'project', value: 'apollo' },
          { key: 'type', value: 'transcript' },
        ];
        expect(ids(await list(A.id, { metadata: two }))).toEqual([rows[3]!.id, rows[0]!.id]);
        expect(ids(await list(A.id, { metadata: [two[1]!, two[0]!] }))).toEqual([rows[3]!.id, rows[0]!.id]);
        expect(ids(await list(A.id, { metadata: [two[0]!], sessionId: 'even' }))).toEqual([
          rows[4]!.id,
          rows[2]!.id,
          rows[0]!.id,
        ]);
        const page1 = await list(A.id, { metadata: [two[0]!], limit: 4 });
        expect(ids(page1)).toEqual([5, 4, 3, 2].map((i) => rows[i]!.id));
        const cursor = { createdAt: page1[3]!.createdAt, id: page1[3]!.id };
        expect(ids(await list(A.id, { metadata: [two[0]!], limit: 4, after: cursor }))).toEqual([
          rows[1]!.id,
          rows[0]!.id,
        ]);
        expect(ids(await list(A.id, { metadata: [two[0]!], createdAfter: T0 + 3, createdBefore: T0 + 6 }))).toEqual([
          rows[5]!.id,
          rows[4]!.id,
        ]);
        // Deleted and expired rows leave the metadata results too.
        await store.softDeleteArtifact(A.id, rows[3]!.id, T0 + 10);
        expect(ids(await list(A.id, { metadata: two }))).toEqual([rows[0]!.id]);
        const exp = await put(row(A.id, { createdAt: T0 + 20, expiresAt: T0 + 30, metadata: { project: 'apollo' } }));
        expect(ids(await list(A.id, { now: T0 + 29, metadata: [two[0]!], limit: 1 }))).toEqual([exp.id]);
        expect(ids(await list(A.id, { now: T0 + 30, metadata: [two[0]!], limit: 1 }))).toEqual([rows[5]!.id]);
      });
    });

    describe('tenant isolation', () => {
      it('tenant B never sees or changes tenant A rows', async () => {
        const a = await put(row(A.id, { sessionId: 's', agentId: 'ag', metadata: { k: 'v' } }));
        const slug = (await store.upsertPage(page(a), T0)).slug;
        expect(await store.createLink(link(a), 10, T0)).toBe(true);
        await store.insertArtifact({
          artifact: row(A.id, { createdAt: T0 + 1 }),
          storageLimitBytes: UNLIMITED,
          idempotency: { key: 'ik', notBefore: T0 - DAY, response: { status: 201, body: '{}' } },
        });

        expect(await store.getArtifact(B.id, a.id)).toBeNull();
        expect(await list(B.id)).toEqual([]);
        expect(await list(B.id, { sessionId: 's' })).toEqual([]);
        expect(await list(B.id, { agentId: 'ag' })).toEqual([]);
        expect(await list(B.id, { metadata: [{ key: 'k', value: 'v' }] })).toEqual([]);
        expect(await store.softDeleteArtifact(B.id, a.id, T0 + 5)).toBeNull();
        expect((await store.getArtifact(A.id, a.id))!.status).toBe('active');
        expect(await store.getSession(B.id, 's')).toBeNull();
        expect(await store.listSessions(B.id, { limit: 10 })).toEqual([]);
        expect(await store.getPageForArtifact(B.id, a.id)).toBeNull();
        expect(await store.getArtifactWithPage(B.id, a.id)).toBeNull();
        expect(await store.unpublishPage(B.id, a.id, T0)).toBeNull();
        expect(await store.unpublishPage(B.id, slug, T0)).toBeNull();
        expect((await store.getPageBySlug(slug))!.page.live).toBe(true);
        expect(await store.countActiveLinks(B.id, T0)).toBe(0);
        expect(await store.getIdempotency(B.id, 'ik', T0 - DAY)).toBeNull();
        expect(await store.blobIsLive(B.id, a.contentHash)).toBe(false);
        expect(await storage(B)).toBe(0);
        expect(await store.getRequestCount(B.id, '2027-01')).toBe(0);
      });
    });

    describe('getArtifactWithPage', () => {
      it('is getArtifact and getPageForArtifact in one: no page, a live page, a page taken offline', async () => {
        const a = await put(row(A.id, { metadata: { k: 'v', n: 1 }, sessionId: 's' }));
        expect(await store.getArtifactWithPage(A.id, a.id)).toEqual({ artifact: a, page: null });
        expect(await store.getArtifactWithPage(A.id, 'art_unknown0000000')).toBeNull();

        await store.upsertPage(page(a, { title: 'T', access: 'password', passwordHash: 'h' }), T0 + 1);
        const live = await store.getArtifactWithPage(A.id, a.id);
        expect(live).toEqual({
          artifact: await store.getArtifact(A.id, a.id),
          page: await store.getPageForArtifact(A.id, a.id),
        });
        expect(live!.page).toMatchObject({ live: true, title: 'T', access: 'password' });

        await store.unpublishPage(A.id, a.id, T0 + 2);
        await store.softDeleteArtifact(A.id, a.id, T0 + 3);
        const after = await store.getArtifactWithPage(A.id, a.id);
        expect(after).toEqual({
          artifact: await store.getArtifact(A.id, a.id),
          page: await store.getPageForArtifact(A.id, a.id),
        });
        expect(after!.artifact.status).toBe('deleted');
        expect(after!.page).toMatchObject({ live: false });
      });

      it('answers reads made together each with its own row, never another tenant’s', async () => {
        // Made in one turn, as concurrent GETs are (an adapter may answer them with one query).
        const a1 = await put(row(A.id, { metadata: { n: 1 } }));
        const a2 = await put(row(A.id, { metadata: { n: 2 }, sessionId: 's' }));
        const b1 = await put(row(B.id, { metadata: { n: 3 } }));
        const published = await store.upsertPage(page(a2, { title: 'two' }), T0 + 1);
        const asks: [TenantRow, ArtifactRow | { id: string }][] = [
          [A, a2],
          [B, a1], // A's artifact asked for as B
          [B, b1],
          [A, { id: 'art_unknown0000000' }],
          [A, a1],
          [A, b1], // B's artifact asked for as A
          [A, a2], // twice in one batch
        ];
        const answers = await Promise.all(asks.map(([t, a]) => store.getArtifactWithPage(t.id, a.id)));
        const expected = (a: ArtifactRow, p: PageRow | null = null) => ({ artifact: a, page: p });
        expect(answers).toEqual([
          expected(a2, published),
          null,
          expected(b1),
          null,
          expected(a1),
          null,
          expected(a2, published),
        ]);
        // Each caller gets its own objects: changing one answer does not change another.
        answers[0]!.artifact.metadata.n = 99;
        expect(answers[6]!.artifact.metadata).toEqual({ n: 2 });
      });
    });

    describe('softDeleteArtifact', () => {
      it('marks the row deleted and takes down links, page and session count', async () => {
        const a = await put(row(A.id, { sessionId: 's', sizeBytes: 250 }));
        const other = await put(row(A.id));
        const l = link(a);
        await store.createLink(l, 10, T0);
        await store.createLink(link(other), 10, T0);
        const p = await store.upsertPage(page(a), T0);

        const result = await store.softDeleteArtifact(A.id, a.id, T0 + 7);
        expect(result).toEqual({ artifact: { ...a, status: 'deleted', deletedAt: T0 + 7 }, deleted: true });
        const after = result!.artifact;
        expect(await store.getArtifact(A.id, a.id)).toEqual(after);
        expect(await store.getLink(l.id)).toBeNull();
        expect(await store.countActiveLinks(A.id, T0)).toBe(1);
        expect(await store.getPageForArtifact(A.id, a.id)).toMatchObject({ slug: p.slug, live: false });
        expect(await store.getSession(A.id, 's')).toMatchObject({ artifactCount: 0 });
        expect(await storage(A)).toBe(100);
        expect(ids(await list(A.id))).toEqual([other.id]);
        expect((await store.getArtifactAnyTenant(a.id))!.artifact.status).toBe('deleted');

        // Repeating changes nothing and reports the row as it is, as not deleted by this call.
        expect(await store.softDeleteArtifact(A.id, a.id, T0 + 9)).toEqual({ artifact: after, deleted: false });
        expect(await store.getSession(A.id, 's')).toMatchObject({ artifactCount: 0 });
        expect(await storage(A)).toBe(100);
        expect(await store.softDeleteArtifact(A.id, 'art_unknown0000000', T0)).toBeNull();
      });

      it('of concurrent deletes at the same instant, exactly one reports deleted: true', async () => {
        for (let round = 0; round < 5; round++) {
          const a = await put(row(A.id, { sessionId: 'race', sizeBytes: 10 }));
          // The same `now` for all: the winner cannot be told by its timestamp.
          const results = await Promise.all(
            Array.from({ length: 8 }, () => store.softDeleteArtifact(A.id, a.id, T0 + 1)),
          );
          expect(results.filter((r) => r?.deleted)).toHaveLength(1);
          for (const r of results) expect(r?.artifact).toMatchObject({ status: 'deleted', deletedAt: T0 + 1 });
        }
        // Retired once each: counts and storage were decremented once per artifact.
        expect(await store.getSession(A.id, 'race')).toMatchObject({ artifactCount: 0 });
        expect(await storage(A)).toBe(0);
      });
    });

    describe('expiry', () => {
      it('expireArtifacts moves due rows to expired with soft-delete side effects, in batches', async () => {
        const due = [];
        for (let i = 0; i < 5; i++) {
          due.push(await put(row(A.id, { sessionId: 's', expiresAt: T0 + HOUR - i, sizeBytes: 10 })));
        }
        const keep = await put(row(A.id, { sessionId: 's', expiresAt: T0 + HOUR + 1, sizeBytes: 10 }));
        const forever = await put(row(B.id));
        const l = link(due[0]!);
        await store.createLink(l, 10, T0);
        await store.upsertPage(page(due[0]!), T0);
        expect(await storage(A)).toBe(60);

        expect(await store.expireArtifacts(T0 + HOUR, 2)).toBe(2);
        expect(await store.expireArtifacts(T0 + HOUR, 2)).toBe(2);
        expect(await store.expireArtifacts(T0 + HOUR, 2)).toBe(1);
        expect(await store.expireArtifacts(T0 + HOUR, 2)).toBe(0);

        for (const d of due) expect((await store.getArtifact(A.id, d.id))!.status).toBe('expired');
        expect((await store.getArtifact(A.id, keep.id))!.status).toBe('active');
        expect((await store.getArtifact(B.id, forever.id))!.status).toBe('active');
        expect(await storage(A)).toBe(10);
        expect(await store.getSession(A.id, 's')).toMatchObject({ artifactCount: 1 });
        expect(await store.getLink(l.id)).toBeNull();
        expect(await store.getPageForArtifact(A.id, due[0]!.id)).toMatchObject({ live: false });
        // Expired rows do not come back, even when listed at an earlier `now`.
        expect(ids(await list(A.id, { now: T0 }))).toEqual([keep.id]);
      });

      it('expireArtifacts with a tenant expires only that tenant’s due rows, and usage read next is exact', async () => {
        const due = [];
        for (let i = 0; i < 3; i++) {
          due.push(await put(row(A.id, { sessionId: 's', expiresAt: T0 + HOUR - i, sizeBytes: 10 })));
        }
        await put(row(A.id, { sessionId: 's', expiresAt: T0 + HOUR + 1, sizeBytes: 10 }));
        const other = await put(row(B.id, { expiresAt: T0 + HOUR - 5, sizeBytes: 10 }));
        await store.createLink(link(due[0]!), 10, T0);
        await store.createLink(link(other), 10, T0);
        // Before: expired by the clock, but the figures still count them (the sweeper has not run).
        expect(await storage(A)).toBe(40);
        expect(await store.countActiveLinks(A.id, T0 + HOUR)).toBe(1);

        expect(await store.expireArtifacts(T0 + HOUR, 2, A.id)).toBe(2);
        expect(await store.expireArtifacts(T0 + HOUR, 2, A.id)).toBe(1);
        expect(await store.expireArtifacts(T0 + HOUR, 2, A.id)).toBe(0);
        expect(await storage(A)).toBe(10);
        expect(await store.getSession(A.id, 's')).toMatchObject({ artifactCount: 1 });
        expect(await store.countActiveLinks(A.id, T0 + HOUR)).toBe(0);
        // The other tenant is left to the sweeper.
        expect((await store.getArtifact(B.id, other.id))!.status).toBe('active');
        expect(await storage(B)).toBe(10);
        expect(await store.countActiveLinks(B.id, T0 + HOUR)).toBe(1);
        expect(await store.expireArtifacts(T0 + HOUR, 10)).toBe(1);
        expect(await storage(B)).toBe(0);
      });

      it('the tenant form and a sweeper expiring at once: each row once, figures exact after either returns', async () => {
        for (let i = 0; i < 30; i++) await put(row(A.id, { sessionId: 's', expiresAt: T0 + i, sizeBytes: 10 }));
        await put(row(A.id, { sessionId: 's', sizeBytes: 10 }));
        const [swept, settled] = await Promise.all([
          store.expireArtifacts(T0 + HOUR, 4),
          (async () => {
            let total = 0;
            for (let n = 4; n === 4; ) {
              n = await store.expireArtifacts(T0 + HOUR, 4, A.id);
              total += n;
            }
            // Read as a whoami would, the moment the tenant form is done.
            return { total, storage: await storage(A), session: await store.getSession(A.id, 's') };
          })(),
        ]);
        expect(swept + settled.total).toBe(30);
        expect(settled.storage).toBe(10);
        expect(settled.session).toMatchObject({ artifactCount: 1 });
        expect(await store.expireArtifacts(T0 + HOUR, 100)).toBe(0);
      });
    });
  });
}
