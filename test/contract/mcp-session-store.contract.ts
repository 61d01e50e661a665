import { beforeEach, describe, expect, it } from 'vitest';
import type { McpSessionRow, MetadataStore, TenantRow } from '../../src/ports/metadata-store.js';
import { type MakeMetadataStore, metadataFixture, T0 } from './metadata-fixture.js';

/**
 * The McpSessionStore contract: sessions are found by id whoever asks (the core checks whose),
 * deleted only by their tenant; a tenant over its cap loses its least recently used; a session's
 * subscriptions are a set, capped, and go with it; idle sessions are purged. On each adapter.
 */
export function mcpSessionStoreContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`McpSessionStore contract: ${name}`, () => {
    const { state } = metadataFixture(makeStore);
    let store: MetadataStore;
    let A: TenantRow;
    let B: TenantRow;
    let n = 0;
    beforeEach(() => {
      ({ store, A, B } = state);
    });
    const session = (tenantId: string, at = T0): McpSessionRow => ({
      id: `mcps_${String(++n).padStart(32, '0')}`,
      tenantId,
      principalId: 'key_1',
      createdAt: at,
      lastUsedAt: at,
    });

    it('finds a session by id, deletes it only for its tenant, with its subscriptions', async () => {
      const s = session(A.id);
      await store.createMcpSession(s, 10);
      expect(await store.getMcpSession(s.id)).toEqual(s);
      expect(await store.mcpSubscriptions(s.id)).toEqual([]);
      expect(await store.subscribeMcp(s.id, 'cairn://session/a', 10)).toBe('ok');
      expect(await store.subscribeMcp(s.id, 'cairn://session/a', 10)).toBe('ok');
      expect(await store.mcpSubscriptions(s.id)).toEqual(['cairn://session/a']);
      expect(await store.deleteMcpSession(B.id, s.id)).toBe(false);
      expect(await store.getMcpSession(s.id)).not.toBeNull();
      expect(await store.deleteMcpSession(A.id, s.id)).toBe(true);
      expect(await store.getMcpSession(s.id)).toBeNull();
      expect(await store.mcpSubscriptions(s.id)).toBeNull();
      expect(await store.subscribeMcp(s.id, 'cairn://session/b', 10)).toBe('gone');
      expect(await store.getMcpSession('mcps_unknown')).toBeNull();
    });

    it('caps subscriptions per session, and unsubscribing makes room', async () => {
      const s = session(A.id);
      await store.createMcpSession(s, 10);
      expect(await store.subscribeMcp(s.id, 'cairn://session/1', 2)).toBe('ok');
      expect(await store.subscribeMcp(s.id, 'cairn://session/2', 2)).toBe('ok');
      expect(await store.subscribeMcp(s.id, 'cairn://session/3', 2)).toBe('too_many');
      await store.unsubscribeMcp(s.id, 'cairn://session/1');
      expect(await store.subscribeMcp(s.id, 'cairn://session/3', 2)).toBe('ok');
      expect((await store.mcpSubscriptions(s.id))?.sort()).toEqual(['cairn://session/2', 'cairn://session/3']);
    });

    it('ends a tenant’s least recently used session when it opens one over its cap, never another tenant’s', async () => {
      const old = session(A.id, T0);
      const used = session(A.id, T0 + 1);
      const others = session(B.id, T0 - 10);
      await store.createMcpSession(old, 2);
      await store.createMcpSession(used, 2);
      await store.createMcpSession(others, 2);
      await store.subscribeMcp(old.id, 'cairn://session/x', 10);
      await store.touchMcpSession(old.id, T0 + 5);
      const fresh = session(A.id, T0 + 6);
      await store.createMcpSession(fresh, 2);
      expect(await store.getMcpSession(used.id)).toBeNull();
      expect((await store.getMcpSession(old.id))?.lastUsedAt).toBe(T0 + 5);
      expect(await store.getMcpSession(fresh.id)).not.toBeNull();
      expect(await store.getMcpSession(others.id)).not.toBeNull();
    });

    it('keeps both caps when two stores on one database open sessions and subscribe at once', async () => {
      const peer = state.openPeer();
      try {
        const opened = Array.from({ length: 8 }, (_, i) => session(A.id, T0 + i));
        await Promise.all(opened.map((s, i) => (i % 2 ? peer : store).createMcpSession(s, 3)));
        const left = [];
        for (const s of opened) if (await store.getMcpSession(s.id)) left.push(s);
        expect(left).toHaveLength(3);
        const target = left[0]!;
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 ? peer : store).subscribeMcp(target.id, `cairn://session/${i}`, 3),
          ),
        );
        expect(answers.filter((a) => a === 'ok')).toHaveLength(3);
        expect(await store.mcpSubscriptions(target.id)).toHaveLength(3);
      } finally {
        await peer.close();
      }
    });

    it('purges sessions idle since before the bound, with their subscriptions, in batches', async () => {
      const idle = [session(A.id, T0), session(A.id, T0 + 1), session(B.id, T0 + 2)];
      const live = session(A.id, T0 + 100);
      for (const s of [...idle, live]) await store.createMcpSession(s, 10);
      await store.subscribeMcp(idle[0]!.id, 'cairn://session/x', 10);
      // A touch never moves a session back in time.
      await store.touchMcpSession(live.id, T0);
      expect(await store.purgeMcpSessions(T0 + 50, 2)).toBe(2);
      expect(await store.purgeMcpSessions(T0 + 50, 2)).toBe(1);
      expect(await store.purgeMcpSessions(T0 + 50, 2)).toBe(0);
      for (const s of idle) expect(await store.getMcpSession(s.id)).toBeNull();
      expect(await store.mcpSubscriptions(idle[0]!.id)).toBeNull();
      expect((await store.getMcpSession(live.id))?.lastUsedAt).toBe(T0 + 100);
    });
  });
}
