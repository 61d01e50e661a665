import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  ArtifactRow,
  InsertArtifactResult,
  LinkRow,
  MetadataStore,
  PageInput,
  PageRow,
  TenantRow,
} from '../../src/ports/metadata-store.js';

/**
 * The MetadataStore contract: every rule in the port's comments, exercised only through the port,
 * so each adapter (SQLite, PostgreSQL) runs this very suite. `makeStore` returns a store on an
 * empty database; the suite calls `migrate()` itself (twice, as every start does).
 */
export function metadataStoreContract(
  name: string,
  makeStore: () => Promise<{
    store: MetadataStore;
    /** Another store on the same database, as another process or instance would open it. */
    openPeer: () => MetadataStore;
    cleanup: () => Promise<void>;
  }>,
): void {
  const T0 = 1_800_000_000_000;
  const MIN = 60_000;
  const HOUR = 60 * MIN;
  const DAY = 24 * HOUR;
  const UNLIMITED = Number.MAX_SAFE_INTEGER;

  describe(`MetadataStore contract: ${name}`, () => {
    let store: MetadataStore;
    let openPeer: () => MetadataStore;
    let cleanup: () => Promise<void>;
    let seq = 0;
    let A: TenantRow;
    let B: TenantRow;

    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    const nextId = (prefix: string, len: number) => `${prefix}${String(++seq).padStart(len, '0')}`;

    async function tenant(tenantName: string): Promise<TenantRow> {
      return store.createTenant({
        id: `ten_${tenantName}`,
        name: tenantName,
        plan: 'free',
        suspended: false,
        createdAt: T0,
        storageBytes: 0,
      });
    }

    function row(tenantId: string, over: Partial<ArtifactRow> = {}): ArtifactRow {
      const id = over.id ?? nextId('art_', 16);
      return {
        id,
        tenantId,
        filename: 'notes.txt',
        contentType: 'text/plain',
        sizeBytes: 100,
        contentHash: sha(id),
        metadata: {},
        sessionId: null,
        agentId: null,
        createdAt: T0,
        expiresAt: null,
        deletedAt: null,
        status: 'active',
        ...over,
      };
    }

    /** Pins then inserts, as the core does. */
    async function put(a: ArtifactRow, limit = UNLIMITED): Promise<ArtifactRow> {
      expect(await store.pinBlob(a.tenantId, a.contentHash, a.sizeBytes, a.createdAt)).toBe('pinned');
      const result = await store.insertArtifact({ artifact: a, storageLimitBytes: limit });
      expect(result.kind).toBe('created');
      return a;
    }

    const list = (tenantId: string, q: Partial<Parameters<MetadataStore['listArtifacts']>[1]> = {}) =>
      store.listArtifacts(tenantId, { now: T0, limit: 100, ...q });
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
    const storage = async (t: TenantRow) => (await store.getTenant(t.id))!.storageBytes;

    function link(artifact: ArtifactRow, over: Partial<LinkRow> = {}): LinkRow {
      return {
        id: nextId('lnk_', 20),
        tenantId: artifact.tenantId,
        artifactId: artifact.id,
        createdAt: T0,
        expiresAt: T0 + DAY,
        ...over,
      };
    }

    function page(artifact: ArtifactRow, over: Partial<PageInput> = {}): PageInput {
      return {
        slug: nextId('pg_', 16),
        tenantId: artifact.tenantId,
        artifactId: artifact.id,
        visibility: 'unlisted',
        access: 'none',
        title: null,
        passwordHash: null,
        ...over,
      };
    }

    /** The schema version a fresh database reaches, as the first migrate() reported it. */
    let schemaVersion = 0;

    beforeEach(async () => {
      ({ store, openPeer, cleanup } = await makeStore());
      const first = await store.migrate();
      expect(first.from).toBe(0);
      expect(first.to).toBeGreaterThan(0);
      schemaVersion = first.to;
      expect(await store.migrate()).toEqual({ from: schemaVersion, to: schemaVersion });
      seq = 0;
      A = await tenant('alpha');
      B = await tenant('beta');
    });

    afterEach(async () => {
      await cleanup();
    });

    describe('schema and settings', () => {
      it('migrate is safe to repeat, reports that nothing was applied, and keeps data', async () => {
        expect(await store.migrate()).toEqual({ from: schemaVersion, to: schemaVersion });
        expect(await store.getTenant(A.id)).toEqual(A);
      });

      it('getOrSetSetting: the first writer wins', async () => {
        expect(await store.getOrSetSetting('signing_secret', 'first')).toBe('first');
        expect(await store.getOrSetSetting('signing_secret', 'second')).toBe('first');
        expect(await store.getOrSetSetting('other', 'x')).toBe('x');
      });
    });

    describe('tenants and keys', () => {
      it('creates, reads, lists and updates tenants', async () => {
        expect(A).toEqual({
          id: 'ten_alpha',
          name: 'alpha',
          plan: 'free',
          suspended: false,
          createdAt: T0,
          storageBytes: 0,
        });
        expect(await store.getTenantByName('beta')).toEqual(B);
        expect(await store.getTenant('ten_nope')).toBeNull();
        expect(await store.getTenantByName('nope')).toBeNull();
        expect((await store.listTenants()).map((t) => t.name).sort()).toEqual(['alpha', 'beta']);
        expect(await store.updateTenant(A.id, { plan: 'pro' })).toMatchObject({ plan: 'pro', suspended: false });
        expect(await store.updateTenant(A.id, { suspended: true })).toMatchObject({ plan: 'pro', suspended: true });
        expect(await store.getTenant(A.id)).toMatchObject({ plan: 'pro', suspended: true });
        expect(await store.getTenant(B.id)).toEqual(B);
        expect(await store.updateTenant('ten_nope', { plan: 'pro' })).toBeNull();
      });

      it('refuses a taken tenant name with invalid_request', async () => {
        await expect(store.createTenant({ ...A, id: 'ten_other' })).rejects.toMatchObject({ code: 'invalid_request' });
        expect(await store.getTenant('ten_other')).toBeNull();
      });

      it('caps unrevoked keys, finds only unrevoked ones, lists all oldest first', async () => {
        const key = (n: number, tenantId = A.id) => ({
          id: `key_${tenantId}_${n}`,
          tenantId,
          hash: sha(`${tenantId}-${n}`),
          last4: String(n).padStart(4, '0'),
          createdAt: T0 + n,
          revokedAt: null,
        });
        expect(await store.createApiKey(key(1), 2)).toBe(true);
        expect(await store.createApiKey(key(2), 2)).toBe(true);
        expect(await store.createApiKey(key(3), 2)).toBe(false);
        expect(await store.createApiKey(key(1, B.id), 2)).toBe(true);

        const found = await store.findApiKey(key(1).hash);
        expect(found?.key).toEqual(key(1));
        expect(found?.tenant).toEqual(A);
        expect(await store.findApiKey(key(3).hash)).toBeNull();

        expect(await store.revokeApiKey(B.id, key(1).id, T0 + 10)).toBe(false);
        expect(await store.revokeApiKey(A.id, key(1).id, T0 + 10)).toBe(true);
        expect(await store.revokeApiKey(A.id, key(1).id, T0 + 11)).toBe(false);
        expect(await store.revokeApiKey(A.id, 'key_unknown', T0 + 11)).toBe(false);
        expect(await store.findApiKey(key(1).hash)).toBeNull();

        // A revoked key frees its slot under the cap.
        expect(await store.createApiKey(key(3), 2)).toBe(true);
        const listed = await store.listApiKeys(A.id);
        expect(listed.map((k) => k.id)).toEqual([key(1).id, key(2).id, key(3).id]);
        expect(listed[0]!.revokedAt).toBe(T0 + 10);
        expect(listed[1]!.revokedAt).toBeNull();
        expect((await store.listApiKeys(B.id)).map((k) => k.id)).toEqual([key(1, B.id).id]);
      });

      describe('credentialsEpoch', () => {
        const key = { id: 'key_epoch', hash: sha('epoch'), last4: '0000', createdAt: T0, revokedAt: null };
        let peer: MetadataStore;
        beforeEach(() => {
          peer = openPeer();
        });
        afterEach(async () => {
          await peer.close();
        });

        /** The epoch once the store can tell (a PostgreSQL instance first connects its listener). */
        async function settledEpoch(s: MetadataStore): Promise<number> {
          for (let i = 0; i < 200; i++) {
            const epoch = s.credentialsEpoch();
            if (epoch !== null) return epoch;
            await new Promise((r) => setTimeout(r, 25));
          }
          throw new Error('credentialsEpoch stayed null');
        }

        /** Waits for `s` to leave `from` (another instance's change arrives asynchronously on PostgreSQL). */
        async function movedFrom(s: MetadataStore, from: number): Promise<boolean> {
          for (let i = 0; i < 200; i++) {
            if (s.credentialsEpoch() !== from) return true;
            await new Promise((r) => setTimeout(r, 25));
          }
          return false;
        }

        it('holds while nothing changes, and moves at once for a change made through the store', async () => {
          expect(await store.createApiKey({ ...key, tenantId: A.id }, 5)).toBe(true);
          const e0 = await settledEpoch(store);
          await store.findApiKey(key.hash);
          await store.listTenants();
          expect(store.credentialsEpoch()).toBe(e0);

          await store.revokeApiKey(A.id, key.id, T0 + 1);
          const e1 = store.credentialsEpoch();
          expect(e1).not.toBe(e0);
          await store.updateTenant(A.id, { suspended: true });
          expect(store.credentialsEpoch()).not.toBe(e1);
        });

        it('moves when another instance revokes a key, suspends a tenant or changes its plan', async () => {
          await peer.migrate();
          expect(await store.createApiKey({ ...key, tenantId: A.id }, 5)).toBe(true);
          const changes = [
            () => peer.revokeApiKey(A.id, key.id, T0 + 1),
            () => peer.updateTenant(A.id, { suspended: true }),
            () => peer.updateTenant(A.id, { plan: 'pro' }),
          ];
          for (const change of changes) {
            const before = await settledEpoch(store);
            await change();
            expect(await movedFrom(store, before)).toBe(true);
          }
          expect(await store.findApiKey(key.hash)).toBeNull();
          expect(await store.getTenant(A.id)).toMatchObject({ suspended: true, plan: 'pro' });
        });
      });
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
        await store.pinBlob(A.id, big.contentHash, big.sizeBytes, T0);
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
        await store.pinBlob(A.id, pending.contentHash, pending.sizeBytes, T0);
        const result = await store.insertArtifact({ artifact: pending, storageLimitBytes: 10 });
        expect(result.kind).toBe('created');
        expect(await store.getArtifact(A.id, pending.id)).toMatchObject({ status: 'pending' });
        expect(await list(A.id)).toEqual([]);
        expect(await storage(A)).toBe(0);
        expect(await store.blobIsLive(A.id, pending.contentHash)).toBe(false);
        expect((await store.getSession(A.id, 'sess-p'))?.artifactCount ?? 0).toBe(0);
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

      it('replays a recent record without writing a second artifact', async () => {
        const first = row(A.id);
        const idem = { key: 'k1', notBefore: T0 - DAY, response: response(1) };
        await store.pinBlob(A.id, first.contentHash, first.sizeBytes, T0);
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
        await store.pinBlob(A.id, sha('same-bytes'), 100, T0);
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
        expect(await store.pinBlob(A.id, hash, 500, T0)).toBe('pinned');
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
        await store.pinBlob(A.id, sha('big'), 1000, T0);
        await expect(store.activateArtifact(A.id, p.id, 999, T0)).rejects.toMatchObject({ code: 'quota_exceeded' });
        expect((await store.getArtifact(A.id, p.id))?.status).toBe('pending');
        expect(await storage(A)).toBe(0);
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
        await store.pinBlob(A.id, late.contentHash, late.sizeBytes, T0);
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

    describe('links', () => {
      it('caps unexpired links per tenant and resolves them with artifact and tenant', async () => {
        const a = await put(row(A.id));
        const first = link(a, { expiresAt: T0 + HOUR });
        expect(await store.createLink(first, 2, T0)).toBe(true);
        expect(await store.createLink(link(a), 2, T0)).toBe(true);
        expect(await store.createLink(link(a), 2, T0)).toBe(false);
        expect(await store.countActiveLinks(A.id, T0)).toBe(2);
        // At its expiry the first link no longer counts, freeing a slot.
        expect(await store.countActiveLinks(A.id, T0 + HOUR)).toBe(1);
        expect(await store.createLink(link(a), 2, T0 + HOUR)).toBe(true);
        expect(await store.getLink(first.id)).toEqual({
          link: first,
          artifact: a,
          tenant: await store.getTenant(A.id),
        });
        expect(await store.getLink('lnk_unknown')).toBeNull();
        const b = await put(row(B.id));
        expect(await store.createLink(link(b), 1, T0)).toBe(true);
      });

      it("lists an artifact's unexpired links newest first, page by page, and deletes one within its tenant only", async () => {
        const a = await put(row(A.id));
        const other = await put(row(A.id));
        const made: LinkRow[] = [];
        // Two share a creation time, so the id breaks the tie; one is expired at T0.
        for (const [createdAt, expiresAt] of [
          [T0 - 3000, T0 + DAY],
          [T0 - 2000, T0 + DAY],
          [T0 - 2000, T0 + DAY],
          [T0 - 1000, T0],
          [T0 - 500, T0 + HOUR],
        ] as const) {
          const l = link(a, { createdAt, expiresAt });
          expect(await store.createLink(l, 100, createdAt)).toBe(true);
          made.push(l);
        }
        await store.createLink(link(other), 100, T0);
        const live = made
          .filter((l) => l.expiresAt > T0)
          .sort((x, y) => y.createdAt - x.createdAt || (y.id < x.id ? -1 : y.id > x.id ? 1 : 0));
        expect(await store.listLinks(A.id, a.id, { now: T0, limit: 10 })).toEqual(live);
        const first = await store.listLinks(A.id, a.id, { now: T0, limit: 2 });
        expect(first).toEqual(live.slice(0, 2));
        const last = first.at(-1)!;
        expect(await store.listLinks(A.id, a.id, { now: T0, limit: 2, after: [last.createdAt, last.id] })).toEqual(
          live.slice(2, 4),
        );
        // Another tenant sees none of them and cannot delete them.
        expect(await store.listLinks(B.id, a.id, { now: T0, limit: 10 })).toEqual([]);
        const target = live[0]!;
        expect(await store.deleteLink(B.id, target.id)).toBe(false);
        expect(await store.getLink(target.id)).not.toBeNull();
        expect(await store.deleteLink(A.id, target.id)).toBe(true);
        expect(await store.getLink(target.id)).toBeNull();
        expect(await store.deleteLink(A.id, target.id)).toBe(false);
        expect(await store.listLinks(A.id, a.id, { now: T0, limit: 10 })).toEqual(live.slice(1));
        expect(await store.countActiveLinks(A.id, T0)).toBe(live.length);
      });
    });

    describe('pages', () => {
      it('keeps one page per artifact and its slug across re-publish and unpublish', async () => {
        const a = await put(row(A.id));
        const created = await store.upsertPage(page(a, { slug: 'pg_first0000000000', title: 'One' }), T0);
        expect(created).toEqual({
          ...page(a, { slug: 'pg_first0000000000', title: 'One' }),
          live: true,
          takenDownAt: null,
          createdAt: T0,
          updatedAt: T0,
        });
        const again = await store.upsertPage(
          page(a, {
            slug: 'pg_second000000000',
            title: 'Two',
            visibility: 'public',
            access: 'password',
            passwordHash: 'h',
          }),
          T0 + 1,
        );
        expect(again).toMatchObject({
          slug: 'pg_first0000000000',
          title: 'Two',
          visibility: 'public',
          access: 'password',
          passwordHash: 'h',
          live: true,
          createdAt: T0,
          updatedAt: T0 + 1,
        });
        expect(await store.getPageBySlug('pg_second000000000')).toBeNull();

        expect(await store.unpublishPage(A.id, 'pg_first0000000000', T0 + 2)).toMatchObject({
          live: false,
          updatedAt: T0 + 2,
        });
        // Unpublishing again is a no-op that still answers with the page.
        expect(await store.unpublishPage(A.id, a.id, T0 + 3)).toMatchObject({
          slug: 'pg_first0000000000',
          live: false,
          updatedAt: T0 + 2,
        });
        const back = await store.upsertPage(page(a, { slug: 'pg_third0000000000' }), T0 + 4);
        expect(back).toMatchObject({ slug: 'pg_first0000000000', live: true, title: null });

        expect(await store.unpublishPage(A.id, a.id, T0 + 5)).toMatchObject({
          slug: 'pg_first0000000000',
          live: false,
        });
        const found = await store.getPageBySlug('pg_first0000000000');
        expect(found?.page).toMatchObject({ live: false, artifactId: a.id });
        expect(found?.artifact).toEqual(a);
        expect(found?.tenant.id).toBe(A.id);
        expect(await store.getPageForArtifact(A.id, a.id)).toEqual(found?.page);
      });

      it('answers null for unknown pages', async () => {
        const a = await put(row(A.id));
        expect(await store.getPageForArtifact(A.id, a.id)).toBeNull();
        expect(await store.unpublishPage(A.id, a.id, T0)).toBeNull();
        expect(await store.unpublishPage(A.id, 'pg_nope', T0)).toBeNull();
        expect(await store.getPageBySlug('pg_nope')).toBeNull();
        expect(await store.takeDownPage('pg_nope', T0)).toBeNull();
        expect(await store.restorePage('pg_nope', T0)).toBeNull();
      });

      it('a takedown sticks: publish leaves the page untouched until it is restored', async () => {
        const a = await put(row(B.id));
        const other = await put(row(B.id));
        const live = await store.upsertPage(page(a, { title: 'Before' }), T0);
        const bystander = await store.upsertPage(page(other), T0);
        // Any tenant's page, by slug alone.
        const down = await store.takeDownPage(live.slug, T0 + 1);
        expect(down).toEqual({ ...live, live: false, takenDownAt: T0 + 1, updatedAt: T0 + 1 });
        // Again: still down, the first takedown time is kept.
        expect(await store.takeDownPage(live.slug, T0 + 2)).toMatchObject({ live: false, takenDownAt: T0 + 1 });

        const refused = await store.upsertPage(
          page(a, { slug: 'pg_ignored00000000', title: 'After', access: 'password', passwordHash: 'h' }),
          T0 + 3,
        );
        expect(refused).toMatchObject({ slug: live.slug, title: 'Before', access: 'none', passwordHash: null });
        expect(refused).toMatchObject({ live: false, takenDownAt: T0 + 1 });
        expect((await store.getPageBySlug(live.slug))?.page).toEqual(refused);
        // The owner may still unpublish (a no-op) and other pages are unaffected.
        expect(await store.unpublishPage(B.id, a.id, T0 + 4)).toMatchObject({ live: false, takenDownAt: T0 + 1 });
        expect((await store.getPageBySlug(bystander.slug))?.page).toEqual(bystander);

        // Restore lifts the mark but does not publish; the owner's next publish does.
        const restored = await store.restorePage(live.slug, T0 + 5);
        expect(restored).toMatchObject({ live: false, takenDownAt: null, updatedAt: T0 + 5 });
        expect(await store.restorePage(live.slug, T0 + 6)).toMatchObject({ takenDownAt: null, updatedAt: T0 + 5 });
        const back = await store.upsertPage(page(a, { title: 'After' }), T0 + 7);
        expect(back).toMatchObject({ slug: live.slug, title: 'After', live: true, takenDownAt: null });
      });
    });

    describe('usage', () => {
      it('adds batches of requests per tenant and month, and reads totals back', async () => {
        expect(
          await store.addRequests([
            { tenantId: A.id, month: '2027-01', n: 2 },
            { tenantId: A.id, month: '2027-02', n: 0 },
            { tenantId: B.id, month: '2027-01', n: 5 },
          ]),
        ).toEqual([2, 0, 5]);
        expect(await store.addRequests([{ tenantId: A.id, month: '2027-01', n: 3 }])).toEqual([5]);
        // n: 0 reads the total without creating or changing anything.
        expect(await store.addRequests([{ tenantId: A.id, month: '2027-01', n: 0 }])).toEqual([5]);
        expect(await store.getRequestCount(A.id, '2027-01')).toBe(5);
        expect(await store.getRequestCount(A.id, '2027-02')).toBe(0);
        expect(await store.getRequestCount(B.id, '2027-01')).toBe(5);
        expect(await store.getRequestCount(A.id, '2026-12')).toBe(0);
        expect(await store.addRequests([])).toEqual([]);
      });

      it('never loses an increment when many callers add at once', async () => {
        const adds = await Promise.all(
          Array.from({ length: 20 }, () => store.addRequests([{ tenantId: A.id, month: '2027-03', n: 3 }])),
        );
        expect(await store.getRequestCount(A.id, '2027-03')).toBe(60);
        // Every caller saw a distinct running total, the last of them the full sum.
        expect(new Set(adds.map(([total]) => total)).size).toBe(20);
        expect(Math.max(...adds.map(([total]) => total ?? 0))).toBe(60);
      });
    });

    describe('sweeper', () => {
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
        expect(await store.purgeArtifacts(cutoff, cutoff, 1)).toBe(1);
        expect(await store.purgeArtifacts(cutoff, cutoff, 10)).toBe(1);
        expect(await store.purgeArtifacts(cutoff, cutoff, 10)).toBe(0);
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
        expect(await store.pinBlob(A.id, sha('abandoned'), 9, T0)).toBe('pinned');

        await store.softDeleteArtifact(A.id, one.id, T0 + 1);
        await store.softDeleteArtifact(A.id, solo.id, T0 + 1);
        // Soft-deleted rows still reference their bytes: only the abandoned pin is orphaned.
        expect(await store.markOrphanBlobs(T0 + 2, 100)).toBe(1);
        expect(await store.markOrphanBlobs(T0 + 2, 100)).toBe(0);

        await store.purgeArtifacts(T0 + 2, T0 + 2, 100);
        // `shared` is still referenced by `two`; `solo`'s bytes are orphaned now.
        expect(await store.markOrphanBlobs(T0 + 3, 100)).toBe(1);

        const claimed = await store.claimOrphanBlobs(T0 + 10, T0 - HOUR, T0 + 20, 100);
        expect(claimed.map((c) => c.contentHash).sort()).toEqual([sha('abandoned'), solo.contentHash].sort());
        for (const c of claimed) expect(c).toMatchObject({ tenantId: A.id, claimedAt: T0 + 20 });
        expect(await store.pinBlob(A.id, solo.contentHash, 100, T0 + 21)).toBe('deleting');
        expect(await store.pinBlob(A.id, shared, 100, T0 + 21)).toBe('pinned');
        expect(await store.claimOrphanBlobs(T0 + 10, T0 - HOUR, T0 + 22, 100)).toEqual([]);

        for (const c of claimed) await store.forgetBlob(c);
        expect(await store.pinBlob(A.id, solo.contentHash, 100, T0 + 23)).toBe('pinned');
        expect(await store.markOrphanBlobs(T0 + 24, 100)).toBe(1);
        expect((await store.getArtifact(A.id, two.id))!.status).toBe('active');
        expect((await store.getArtifact(A.id, live.id))!.status).toBe('active');
        expect(await store.blobIsLive(A.id, shared)).toBe(true);
      });

      it('never claims bytes referenced again, or orphaned too recently', async () => {
        await store.pinBlob(A.id, sha('x'), 100, T0);
        await store.pinBlob(A.id, sha('y'), 100, T0);
        await store.pinBlob(A.id, sha('z'), 100, T0);
        await store.pinBlob(A.id, sha('pending'), 100, T0);
        await store.insertArtifact({
          artifact: row(A.id, { contentHash: sha('pending'), status: 'pending' }),
          storageLimitBytes: UNLIMITED,
        });
        expect(await store.markOrphanBlobs(T0 + 1, 100)).toBe(3);
        // x is pinned again (an upload is about to use it), y gets an artifact row.
        expect(await store.pinBlob(A.id, sha('x'), 100, T0 + 2)).toBe('pinned');
        await store.insertArtifact({ artifact: row(A.id, { contentHash: sha('y') }), storageLimitBytes: UNLIMITED });
        expect(await store.claimOrphanBlobs(T0 + 1, T0 - HOUR, T0 + 3, 100)).toEqual([]);
        const claimed = await store.claimOrphanBlobs(T0 + 2, T0 - HOUR, T0 + 3, 100);
        expect(claimed).toEqual([{ tenantId: A.id, contentHash: sha('z'), claimedAt: T0 + 3 }]);
      });

      it('re-claims stale claims and honours only the current claim', async () => {
        await store.pinBlob(A.id, sha('x'), 100, T0);
        await store.markOrphanBlobs(T0, 100);
        const [first] = await store.claimOrphanBlobs(T0 + 1, T0 - HOUR, T0 + 10, 100);
        expect(first).toBeDefined();
        // Not stale yet: nobody else may take it.
        expect(await store.claimOrphanBlobs(T0 + 1, T0 + 10, T0 + 20, 100)).toEqual([]);
        const [second] = await store.claimOrphanBlobs(T0 + 1, T0 + 11, T0 + 30, 100);
        expect(second).toEqual({ tenantId: A.id, contentHash: sha('x'), claimedAt: T0 + 30 });
        await store.forgetBlob(first!);
        expect(await store.pinBlob(A.id, sha('x'), 100, T0 + 31)).toBe('deleting');
        await store.forgetBlob(second!);
        expect(await store.pinBlob(A.id, sha('x'), 100, T0 + 32)).toBe('pinned');
      });

      it('marks and claims in bounded batches', async () => {
        for (let i = 0; i < 5; i++) await store.pinBlob(i % 2 ? A.id : B.id, sha(`b${i}`), 1, T0);
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

      it('purgeDeadLinks drops expired links and links to inactive artifacts, in batches', async () => {
        const a = await put(row(A.id));
        const pending = row(A.id, { status: 'pending' });
        await store.insertArtifact({ artifact: pending, storageLimitBytes: UNLIMITED });
        const keep = link(a, { expiresAt: T0 + HOUR + 1 });
        await store.createLink(keep, 100, T0);
        await store.createLink(link(a, { expiresAt: T0 + HOUR }), 100, T0);
        await store.createLink(link(a, { expiresAt: T0 + 1 }), 100, T0);
        const orphan = link(pending, { expiresAt: T0 + DAY });
        await store.createLink(orphan, 100, T0);
        expect(await store.purgeDeadLinks(T0 + HOUR, 2)).toBe(2);
        expect(await store.purgeDeadLinks(T0 + HOUR, 2)).toBe(1);
        expect(await store.purgeDeadLinks(T0 + HOUR, 2)).toBe(0);
        expect(await store.getLink(orphan.id)).toBeNull();
        expect((await store.getLink(keep.id))?.link).toEqual(keep);
        expect(await store.countActiveLinks(A.id, T0)).toBe(1);
      });
    });
  });
}
