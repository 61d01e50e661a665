import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore, TenantRow } from '../../src/ports/metadata-store.js';
import { type MakeMetadataStore, metadataFixture, T0 } from './metadata-fixture.js';

/**
 * The TenantStore contract: tenants, keys (and the credentials epoch other instances watch),
 * monthly request counters.
 * Exercised through the port only, on each adapter (SQLite, PostgreSQL), from the shared fixture
 * (metadata-fixture.ts): an empty database, migrated as every start does, with tenants A and B.
 */
export function tenantStoreContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`TenantStore contract: ${name}`, () => {
    const { state, sha } = metadataFixture(makeStore);
    let store: MetadataStore;
    let openPeer: () => MetadataStore;
    let A: TenantRow;
    let B: TenantRow;
    beforeEach(() => {
      ({ store, openPeer, A, B } = state);
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
  });
}
