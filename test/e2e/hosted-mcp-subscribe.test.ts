import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventId } from '../../src/shared/event-types.js';
import { put } from '../helpers/e2e.js';
import { connectMcpSubscriber, initializeMessage, type McpSubscriber, postMcp } from '../helpers/hosted.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { openSse } from '../helpers/sse.js';
import { data } from '../mcp/mcp-client.js';

/**
 * Resource subscriptions on the hosted endpoint (Streamable HTTP), driven by the MCP SDK's own
 * client: initialize opens a session (Mcp-Session-Id), resources/subscribe records a URI for it,
 * and the client's GET /mcp stream gets notifications/resources/updated when a change made
 * anywhere (here: the REST API) touches it. Sessions are bound to their tenant and credential.
 * Runs on both backends (the e2e-scaleout project: PostgreSQL); across two instances, see
 * test/scaleout/mcp-subscribe-two-instances.test.ts.
 */

let srv: TestServer;
const open: McpSubscriber[] = [];

beforeAll(async () => {
  // Three streams per tenant, so the bound is reached here; heartbeats fast enough to watch.
  srv = await startTestServer({
    env: { CAIRN_MAX_EVENT_STREAMS_PER_TENANT: '3', CAIRN_EVENT_HEARTBEAT_SECONDS: '0.2' },
  });
});
afterAll(async () => {
  await Promise.allSettled(open.map((m) => m.close()));
  await srv?.close();
});

async function subscriber(key: string): Promise<McpSubscriber> {
  const m = await connectMcpSubscriber(srv.apiUrl, key);
  open.push(m);
  expect(await m.streamOpened).toBe(200);
  return m;
}

const rpc = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function sessionOf(key: string): Promise<string> {
  const res = await postMcp(srv.apiUrl, initializeMessage, bearer(key));
  expect(res.status).toBe(200);
  const id = res.headers.get('mcp-session-id');
  expect(id).toMatch(/^mcps_[A-Za-z0-9_-]{32}$/);
  return id as string;
}

describe('hosted MCP resources/subscribe', () => {
  it('notifies a subscribed session of an upload through the REST API and of its seal; unsubscribing stops it', async () => {
    const key = await srv.createTenant('hosted-subscriber');
    const m = await subscriber(key);
    expect(m.transport.sessionId).toMatch(/^mcps_/);
    expect(m.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    await m.client.subscribeResource({ uri: 'cairn://session/run-42' });

    await put(srv.apiUrl, key, 'elsewhere', { session_id: 'run-7' });
    const rec = await put(srv.apiUrl, key, 'landed', { session_id: 'run-42' });
    // run-7's upload came first and is not subscribed: the first notification is run-42's.
    expect(await m.nextUpdate()).toBe('cairn://session/run-42');
    const view = await m.client.readResource({ uri: 'cairn://session/run-42' });
    expect(JSON.stringify(view)).toContain(rec.artifact_id);

    const caller = await srv.core.tenants.authenticate(key);
    await srv.core.sessions.seal(caller, 'run-42');
    expect(await m.nextUpdate()).toBe('cairn://session/run-42');

    // An artifact's own resource, subscribed by tool-less URI.
    await m.client.subscribeResource({ uri: `cairn://artifact/${rec.artifact_id}` });
    await m.client.unsubscribeResource({ uri: 'cairn://session/run-42' });
    await srv.core.artifacts.softDelete(caller, rec.artifact_id);
    // The deletion touches run-42 (now unheard) and the artifact (heard): only the latter comes.
    expect(await m.nextUpdate()).toBe(`cairn://artifact/${rec.artifact_id}`);
    await m.client.subscribeResource({ uri: 'cairn://session/run-43' });
    await m.client.unsubscribeResource({ uri: 'cairn://session/run-43' });
    await m.client.subscribeResource({ uri: 'cairn://session/sentinel' });
    await put(srv.apiUrl, key, 'unheard', { session_id: 'run-43' });
    await put(srv.apiUrl, key, 'heard', { session_id: 'sentinel' });
    expect(await m.nextUpdate()).toBe('cairn://session/sentinel');
  });

  it('refuses another tenant’s session id, or an unknown one, as 404 on POST, GET and DELETE', async () => {
    const aliceKey = await srv.createTenant('session-alice');
    const bobKey = await srv.createTenant('session-bob');
    const alices = await sessionOf(aliceKey);
    for (const [who, sessionId] of [
      ['bob with alice’s session', alices],
      ['an unknown session', 'mcps_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
    ] as const) {
      const headers = { ...bearer(bobKey), 'mcp-session-id': sessionId };
      const post = await postMcp(srv.apiUrl, rpc(2, 'tools/list'), headers);
      expect(post.status, who).toBe(404);
      expect(JSON.parse(post.text).error.code).toBe('not_found');
      const get = await openSse(`${srv.apiUrl}/mcp`, bobKey, { 'mcp-session-id': sessionId });
      expect(get.status, who).toBe(404);
      get.close();
      const del = await fetch(`${srv.apiUrl}/mcp`, { method: 'DELETE', headers });
      expect(del.status, who).toBe(404);
    }
    // Alice's session is untouched by bob's attempts, and bob cannot subscribe it to anything.
    const mine = await postMcp(srv.apiUrl, rpc(3, 'resources/subscribe', { uri: 'cairn://session/x' }), {
      ...bearer(aliceKey),
      'mcp-session-id': alices,
    });
    expect(mine.status).toBe(200);
    expect(JSON.parse(mine.text)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    // Another key of alice's own tenant is another credential: the session is not its.
    const otherKey = await srv.core.tenants.createKey((await srv.core.tenants.authenticate(aliceKey)).tenant);
    const other = await postMcp(srv.apiUrl, rpc(4, 'tools/list'), { ...bearer(otherKey), 'mcp-session-id': alices });
    expect(other.status).toBe(404);
  });

  it('serves clients without a session as before: plain POSTs call tools; subscribing needs a session', async () => {
    const key = await srv.createTenant('stateless');
    const call = await postMcp(srv.apiUrl, rpc(1, 'tools/call', { name: 'whoami', arguments: {} }), bearer(key));
    expect(call.status).toBe(200);
    expect(call.headers.get('mcp-session-id')).toBeNull();
    expect(call.headers.get('content-type')).toContain('application/json');
    expect(data(JSON.parse(call.text).result).tenant_name).toBe('stateless');

    const sub = await postMcp(srv.apiUrl, rpc(2, 'resources/subscribe', { uri: 'cairn://session/s' }), bearer(key));
    expect(sub.status).toBe(200);
    expect(JSON.parse(sub.text).error.message).toContain('needs an MCP session');

    const sessionId = await sessionOf(key);
    const bad = await postMcp(srv.apiUrl, rpc(3, 'resources/subscribe', { uri: 'https://example.com/' }), {
      ...bearer(key),
      'mcp-session-id': sessionId,
    });
    expect(JSON.parse(bad.text).error.message).toContain('is not a Cairn resource');
  });

  it('DELETE /mcp ends the session: its stream closes and its id is unknown from then on', async () => {
    const key = await srv.createTenant('terminator');
    const m = await subscriber(key);
    const sessionId = m.transport.sessionId as string;
    const stream = await openSse(`${srv.apiUrl}/mcp`, key, { 'mcp-session-id': sessionId });
    expect(stream.status).toBe(200);
    await m.transport.terminateSession();
    await stream.ended;
    const after = await postMcp(srv.apiUrl, rpc(5, 'tools/list'), { ...bearer(key), 'mcp-session-id': sessionId });
    expect(after.status).toBe(404);
  });

  it('a GET stream counts as one of the tenant’s event streams, sends heartbeats, and resumes after Last-Event-ID', async () => {
    const key = await srv.createTenant('streams');
    const sessionId = await sessionOf(key);
    const headers = { 'mcp-session-id': sessionId };
    const subscribe = await postMcp(srv.apiUrl, rpc(1, 'resources/subscribe', { uri: 'cairn://session/resume' }), {
      ...bearer(key),
      ...headers,
    });
    expect(subscribe.status).toBe(200);
    const { tenant } = await srv.core.tenants.authenticate(key);
    // HEAD answers the stream's headers and takes no stream.
    const head = await api(srv.apiUrl, key, 'HEAD', '/mcp', undefined, { ...headers, accept: 'text/event-stream' });
    expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    expect(srv.core.eventHub.open(tenant.id)).toBe(0);
    // Two uploads before any stream is open: a stream resuming from before them hears both.
    const before = await srv.core.events.head(tenant.id);
    await put(srv.apiUrl, key, 'one', { session_id: 'resume' });
    await put(srv.apiUrl, key, 'two', { session_id: 'resume' });
    const resumed = await openSse(`${srv.apiUrl}/mcp`, key, { ...headers, 'last-event-id': eventId(before) });
    const events = await openSse(`${srv.apiUrl}/v1/events/stream`, key);
    expect([resumed.status, events.status]).toEqual([200, 200]);
    const first = await resumed.nextEvent(2000).catch(() => null);
    const got = [first, await resumed.nextEvent(2000).catch(() => null)].map((e) => e && JSON.parse(e.data ?? ''));
    expect(got).toEqual([
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'cairn://session/resume' } },
      { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri: 'cairn://session/resume' } },
    ]);
    expect(first?.id).toBe(eventId(before + 1));
    let beat = await resumed.next(2000);
    while (beat.comment === undefined) beat = await resumed.next(2000);
    expect(beat.comment).toBe('heartbeat');

    const third = await openSse(`${srv.apiUrl}/mcp`, key, headers);
    expect(third.status).toBe(200);
    // The fourth stream of this tenant (of either kind) is refused before any byte.
    const fourth = await openSse(`${srv.apiUrl}/mcp`, key, headers);
    expect(fourth.status).toBe(429);
    expect(JSON.parse(fourth.body).error.code).toBe('rate_limited');
    for (const s of [resumed, events, third, fourth]) s.close();

    const noAccept = await api(srv.apiUrl, key, 'GET', '/mcp', undefined, headers);
    expect(noAccept.status).toBe(406);
  });
});
