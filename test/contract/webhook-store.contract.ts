import { beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryRow, MetadataStore, TenantRow, WebhookRow } from '../../src/ports/metadata-store.js';
import { type MakeMetadataStore, metadataFixture, T0 } from './metadata-fixture.js';

/**
 * The WebhookStore contract: endpoints start at their tenant's feed head and are capped; a
 * lease is held by one claimer at a time, across stores on one database; only the holder's
 * writes count; a disabling attempt records webhook.disabled with it. On each adapter.
 */
export function webhookStoreContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`WebhookStore contract: ${name}`, () => {
    const { state, row, put } = metadataFixture(makeStore);
    let store: MetadataStore;
    let A: TenantRow;
    let B: TenantRow;
    let n = 0;
    beforeEach(() => {
      ({ store, A, B } = state);
    });

    const hook = (tenantId: string, over: Partial<WebhookRow> = {}): Omit<WebhookRow, 'cursorSeq'> => ({
      id: `wh_${String(++n).padStart(16, '0')}`,
      tenantId,
      url: 'https://example.com/hook',
      types: null,
      sessionId: null,
      secret: 'whsec_c2VjcmV0',
      previousSecret: null,
      previousUntil: null,
      status: 'active',
      createdAt: T0,
      attempts: 0,
      failingSince: null,
      nextAttemptAt: T0,
      disabledAt: null,
      leaseOwner: null,
      leaseUntil: null,
      ...over,
    });
    const delivery = (w: WebhookRow, seq: number, delivered: boolean, at = T0): DeliveryRow => ({
      id: `whd_${String(++n).padStart(16, '0')}`,
      webhookId: w.id,
      tenantId: w.tenantId,
      eventSeq: seq,
      eventType: 'artifact.created',
      attempt: 1,
      delivered,
      statusCode: delivered ? 200 : 500,
      error: delivered ? null : 'HTTP 500',
      durationMs: 3,
      createdAt: at,
    });

    it('starts an endpoint at its tenant’s head, and caps a tenant’s endpoints', async () => {
      await put(row(A.id));
      const w = (await store.createWebhook(hook(A.id), 2))!;
      expect(w.cursorSeq).toBe(1);
      expect((await store.createWebhook(hook(B.id), 2))!.cursorSeq).toBe(0);
      expect(await store.createWebhook(hook(A.id), 2)).not.toBeNull();
      expect(await store.createWebhook(hook(A.id), 2)).toBeNull();
      expect((await store.listWebhooks(A.id, 10)).map((x) => x.id)).toHaveLength(2);
      expect(await store.getWebhook(B.id, w.id)).toBeNull();
      expect(await store.deleteWebhook(B.id, w.id)).toBe(false);
      expect(await store.deleteWebhook(A.id, w.id)).toBe(true);
    });

    it('claims only endpoints behind their feed and due, each by one claimer across stores', async () => {
      const peer = state.openPeer();
      try {
        const hooks: WebhookRow[] = [];
        for (let i = 0; i < 6; i++) hooks.push((await store.createWebhook(hook(A.id), 100))!);
        const later = (await store.createWebhook(hook(A.id, { nextAttemptAt: T0 + 1000 }), 100))!;
        expect(await store.claimWebhooks('x', T0, T0 + 100, 10)).toEqual([]); // nothing to send yet
        await put(row(A.id));
        const [one, two] = await Promise.all([
          store.claimWebhooks('one', T0, T0 + 100, 10),
          peer.claimWebhooks('two', T0, T0 + 100, 10),
        ]);
        const claimed = [...one, ...two].map((w) => w.id).sort();
        expect(claimed).toEqual(hooks.map((w) => w.id).sort());
        expect(claimed).not.toContain(later.id);
        // Held: nobody else gets them until the lease lapses.
        expect(await store.claimWebhooks('three', T0 + 99, T0 + 200, 10)).toEqual([]);
        const lapsed = await store.claimWebhooks('three', T0 + 100, T0 + 200, 10);
        expect(lapsed.map((w) => w.id).sort()).toEqual(hooks.map((w) => w.id).sort());
      } finally {
        await peer.close();
      }
    });

    it('counts only the lease holder’s writes, and records webhook.disabled with the disabling attempt', async () => {
      const w = (await store.createWebhook(hook(A.id), 10))!;
      await put(row(A.id));
      await put(row(A.id));
      const [held] = await store.claimWebhooks('me', T0, T0 + 100, 1);
      expect(held!.id).toBe(w.id);
      expect(await store.recordAttempt({ owner: 'thief', delivery: delivery(w, 1, true), nextAttemptAt: T0 })).toBe(
        false,
      );
      expect(await store.skipWebhookTo(w.id, 'thief', 2)).toBe(false);
      expect(await store.renewWebhookLease(w.id, 'thief', T0 + 500)).toBe(false);
      expect(await store.recordAttempt({ owner: 'me', delivery: delivery(w, 1, true), nextAttemptAt: T0 })).toBe(true);
      expect((await store.getWebhook(A.id, w.id))!.cursorSeq).toBe(1);
      expect(
        await store.recordAttempt({ owner: 'me', delivery: delivery(w, 2, false, T0 + 5), nextAttemptAt: T0 + 50 }),
      ).toBe(true);
      let now = (await store.getWebhook(A.id, w.id))!;
      expect(now).toMatchObject({ cursorSeq: 1, attempts: 1, failingSince: T0 + 5, nextAttemptAt: T0 + 50 });
      expect(
        await store.recordAttempt({
          owner: 'me',
          delivery: delivery(w, 2, false, T0 + 9),
          nextAttemptAt: T0 + 90,
          disable: { at: T0 + 9, subject: { webhook_id: w.id, url: w.url, disabled_at: 'x', reason: 'r' } },
        }),
      ).toBe(true);
      now = (await store.getWebhook(A.id, w.id))!;
      expect(now).toMatchObject({ status: 'disabled', disabledAt: T0 + 9, leaseOwner: null });
      const events = await store.listEvents(A.id, { after: 0, limit: 10 });
      expect(events.map((e) => e.type)).toEqual(['artifact.created', 'artifact.created', 'webhook.disabled']);
      expect((await store.listDeliveries(A.id, w.id, 10)).map((d) => d.eventSeq)).toEqual([2, 2, 1]);
      expect(await store.listDeliveries(B.id, w.id, 10)).toEqual([]);
      expect(await store.claimWebhooks('me', T0 + 1000, T0 + 2000, 10)).toEqual([]); // disabled
      expect(await store.purgeDeliveries(T0 + 6, 10)).toBe(2);
      expect((await store.listDeliveries(A.id, w.id, 10)).map((d) => d.createdAt)).toEqual([T0 + 9]);
    });
  });
}
