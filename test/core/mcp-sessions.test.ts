import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_MCP_SESSIONS_PER_TENANT, MCP_SESSION_IDLE_MS } from '../../src/core/mcp-sessions.js';
import { type CoreHarness, codeOf, coreHarness } from './harness.js';

/**
 * Hosted MCP sessions in the core: bound to their tenant and credential, alive while used,
 * ended when idle (refused at once, dropped by the sweeper) or when the tenant opens too many.
 */
describe('McpSessionService', () => {
  let h: CoreHarness;
  beforeEach(async () => {
    h = await coreHarness();
  });
  afterEach(async () => h.close());

  it('binds a session to its tenant and credential: anyone else’s use is not_found', async () => {
    const alice = await h.tenant('alice');
    const bob = await h.tenant('bob');
    const s = h.core.mcpSessions;
    const id = await s.open({ caller: alice, principalId: alice.key.id });
    expect((await s.resolve({ caller: alice, principalId: alice.key.id }, id)).tenantId).toBe(alice.tenant.id);
    expect(await codeOf(s.resolve({ caller: bob, principalId: bob.key.id }, id))).toBe('not_found');
    expect(await codeOf(s.resolve({ caller: bob, principalId: alice.key.id }, id))).toBe('not_found');
    expect(await codeOf(s.resolve({ caller: alice, principalId: 'grant_other' }, id))).toBe('not_found');
    expect(await codeOf(s.end({ caller: bob, principalId: bob.key.id }, id))).toBe('not_found');
    expect(await s.subscriptions(id)).toEqual(new Set());
  });

  it('ends a session idle for its lifetime, and use keeps it alive', async () => {
    const alice = await h.tenant('alice');
    const me = { caller: alice, principalId: alice.key.id };
    const s = h.core.mcpSessions;
    const used = await s.open(me);
    const idle = await s.open(me);
    await s.subscribe(await s.resolve(me, used), 'cairn://session/run-1');
    h.clock.advance(MCP_SESSION_IDLE_MS - 1000);
    await s.resolve(me, used);
    // A stream's heartbeat marks its session used too.
    expect(await s.subscriptions(used, true)).toEqual(new Set(['cairn://session/run-1']));
    h.clock.advance(1000);
    // Idle exactly its lifetime: still there (read without marking it used); a moment more, gone.
    expect(await s.subscriptions(idle)).toEqual(new Set());
    h.clock.advance(1);
    expect(await codeOf(s.resolve(me, idle))).toBe('not_found');
    expect(await s.subscriptions(idle)).toBeNull();
    expect((await h.core.sweeper.runOnce()).mcpSessionsPurged).toBe(1);
    expect(await s.subscriptions(used)).toEqual(new Set(['cairn://session/run-1']));
    h.clock.advance(MCP_SESSION_IDLE_MS + 1);
    expect((await h.core.sweeper.runOnce()).mcpSessionsPurged).toBe(1);
    expect(await codeOf(s.resolve(me, used))).toBe('not_found');
  });

  it('opening one session over the tenant’s cap ends its least recently used', async () => {
    const alice = await h.tenant('alice');
    const me = { caller: alice, principalId: alice.key.id };
    const s = h.core.mcpSessions;
    const first = await s.open(me);
    h.clock.advance(120_000);
    const second = await s.open(me);
    for (let i = 2; i < MAX_MCP_SESSIONS_PER_TENANT; i++) {
      h.clock.advance(1);
      await s.open(me);
    }
    h.clock.advance(120_000);
    await s.resolve(me, first);
    await s.open(me);
    expect(await codeOf(s.resolve(me, second))).toBe('not_found');
    expect((await s.resolve(me, first)).id).toBe(first);
  });

  it('refuses URIs that are not Cairn resources', async () => {
    const alice = await h.tenant('alice');
    const me = { caller: alice, principalId: alice.key.id };
    const session = await h.core.mcpSessions.resolve(me, await h.core.mcpSessions.open(me));
    for (const uri of ['https://example.com/', 'cairn://session/', 'cairn://artifact/art_x/meta', 'cairn://whoami']) {
      expect(await codeOf(h.core.mcpSessions.subscribe(session, uri)), uri).toBe('invalid_request');
    }
    await h.core.mcpSessions.subscribe(session, 'cairn://artifact/art_x/bytes');
    await h.core.mcpSessions.subscribe(session, 'cairn://session/run%2F1');
  });
});
