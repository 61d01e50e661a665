import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { put } from '../helpers/e2e.js';
import { connectMcpSubscriber, postMcp } from '../helpers/hosted.js';
import { scaleoutSet, scaleoutUnavailable } from '../helpers/scaleout.js';
import { openSse } from '../helpers/sse.js';

/**
 * Hosted MCP subscriptions across a scale-out set behind a balancer without stickiness: two
 * servers sharing only PostgreSQL, Redis and S3. The MCP SDK client initializes and subscribes
 * through instance A, its GET stream lands on B, and an upload made through A's REST API is
 * notified on B's stream; the session opened on A is known to B, and ending it on A ends B's stream.
 */

const reason = await scaleoutUnavailable();

describe.skipIf(reason !== null)('hosted MCP subscriptions across two instances on PostgreSQL', () => {
  let set: Awaited<ReturnType<typeof scaleoutSet>>;
  const instance = () => set.instance();

  beforeAll(async () => {
    // Heartbeats every 200 ms: how soon B's stream learns that A ended its session.
    set = await scaleoutSet({ CAIRN_EVENT_HEARTBEAT_SECONDS: '0.2' });
  });
  afterAll(async () => set?.close());

  it('subscribes through A, streams from B, and hears an upload made through A’s REST API', async () => {
    const a = await instance();
    const b = await instance();
    const { apiKey } = await a.core.tenants.create('mcp-two', 'pro');
    const m = await connectMcpSubscriber(a.config.apiOrigin, apiKey, b.config.apiOrigin);
    try {
      expect(await m.streamOpened).toBe(200);
      const { tenant } = await a.core.tenants.authenticate(apiKey);
      // The stream is B's: B follows the tenant's feed, A follows nothing.
      expect([a.core.eventHub.open(tenant.id), b.core.eventHub.open(tenant.id)]).toEqual([0, 1]);
      await m.client.subscribeResource({ uri: 'cairn://session/run-42' });
      await put(a.config.apiOrigin, apiKey, 'elsewhere', { session_id: 'run-7' });
      await put(a.config.apiOrigin, apiKey, 'landed', { session_id: 'run-42' });
      expect(await m.nextUpdate(3000)).toBe('cairn://session/run-42');

      // The session opened on A is B's too, and ending it on A ends B's stream.
      const sessionId = m.transport.sessionId as string;
      const headers = { authorization: `Bearer ${apiKey}`, 'mcp-session-id': sessionId };
      const onB = await postMcp(
        b.config.apiOrigin,
        { jsonrpc: '2.0', id: 9, method: 'tools/list', params: {} },
        headers,
      );
      expect(onB.status).toBe(200);
      const raw = await openSse(`${b.config.apiOrigin}/mcp`, apiKey, { 'mcp-session-id': sessionId });
      expect(raw.status).toBe(200);
      expect((await fetch(`${a.config.apiOrigin}/mcp`, { method: 'DELETE', headers })).status).toBe(200);
      await raw.ended;
      expect((await postMcp(b.config.apiOrigin, { jsonrpc: '2.0', id: 10, method: 'ping' }, headers)).status).toBe(404);
    } finally {
      await m.close();
    }
  });
});
