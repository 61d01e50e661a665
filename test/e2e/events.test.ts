import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectError, put, type Rec } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { openSse } from '../helpers/sse.js';

/**
 * The change feed over HTTP (issue 55): GET /v1/events as a list like every other, and
 * GET /v1/events/stream as Server-Sent Events with Last-Event-ID resume, heartbeats, a bound on
 * a tenant's open streams and one counted request per stream; each tenant sees its own events only.
 */

let s: TestServer;
let other: string;
beforeAll(async () => {
  s = await startTestServer({
    env: { CAIRN_EVENT_HEARTBEAT_SECONDS: '0.3', CAIRN_MAX_EVENT_STREAMS_PER_TENANT: '2' },
  });
  other = await s.createTenant('other');
});
afterAll(async () => {
  await s?.close();
});

const usage = async (key: string) =>
  (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_requests_month as number;

describe('GET /v1/events', () => {
  it('lists what changed with the record the API answered, oldest first, for its own tenant only', async () => {
    const key = await s.createTenant('lister');
    const rec = await put(s.apiUrl, key, 'hello', { session_id: 'run-42' });
    const sealed = await api(s.apiUrl, key, 'POST', '/v1/sessions/run-42/seal');
    expect(sealed.status).toBe(200);
    await put(s.apiUrl, other, 'theirs', { session_id: 'run-42' });

    const r = await api(s.apiUrl, key, 'GET', '/v1/events');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ next_cursor: null, has_more: false });
    expect(r.json.events.map((e: Rec) => e.type)).toEqual(['artifact.created', 'session.sealed']);
    expect(r.json.events[0]).toEqual({
      event_id: 'evt_0000000000000001',
      type: 'artifact.created',
      created_at: rec.created_at,
      data: rec,
    });
    const sealedOnly = await api(s.apiUrl, key, 'GET', '/v1/events?types=session.sealed&session_id=run-42');
    expect(sealedOnly.json.events.map((e: Rec) => e.event_id)).toEqual(['evt_0000000000000002']);
    const after = await api(s.apiUrl, key, 'GET', '/v1/events?after=evt_0000000000000002');
    expect(after.json.events).toEqual([]);
  });

  it('lists a session link created and revoked with the record the create answered', async () => {
    const key = await s.createTenant('session-sharer');
    await put(s.apiUrl, key, 'report', { session_id: 'run-7' });
    expect((await api(s.apiUrl, key, 'POST', '/v1/sessions/run-7/seal')).status).toBe(200);
    const made = await api(s.apiUrl, key, 'POST', '/v1/sessions/run-7/links', { expires_in: 3600 });
    expect(made.status, made.text).toBe(201);
    expect((await api(s.apiUrl, key, 'DELETE', `/v1/links/${made.json.link_id}`)).status).toBe(200);
    const r = await api(s.apiUrl, key, 'GET', '/v1/events?types=session_link.*&session_id=run-7');
    expect(r.status, r.text).toBe(200);
    expect(r.json.events.map((e: Rec) => [e.event_id, e.type])).toEqual([
      ['evt_0000000000000003', 'session_link.created'],
      ['evt_0000000000000004', 'session_link.revoked'],
    ]);
    expect(r.json.events[0].data).toEqual(made.json);
    expect(r.json.events[1].data).toMatchObject({ link_id: made.json.link_id, session_id: 'run-7' });
    expect((await api(s.apiUrl, other, 'GET', '/v1/events?types=session_link.*')).json.events).toEqual([]);
  });

  it('refuses unknown parameters and bad positions with the error envelope, and needs a key', async () => {
    expectError(await api(s.apiUrl, s.apiKey, 'GET', '/v1/events?since=1'), 400, 'invalid_request');
    expectError(await api(s.apiUrl, s.apiKey, 'GET', '/v1/events?after=nope'), 400, 'invalid_request');
    expectError(await api(s.apiUrl, s.apiKey, 'GET', '/v1/events?types=artifact.made'), 400, 'invalid_request');
    expectError(await api(s.apiUrl, null, 'GET', '/v1/events'), 401, 'unauthorized');
  });
});

describe('GET /v1/events/stream', () => {
  it('sends new events as they happen, resumes after Last-Event-ID, and beats between', async () => {
    const key = await s.createTenant('streamer');
    await put(s.apiUrl, key, 'before the stream');
    const stream = await openSse(`${s.apiUrl}/v1/events/stream`, key);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers['cache-control']).toBe('no-store');
      expect(stream.headers['x-request-id']).toBeTruthy();
      // Opened without a position: only what happens from now on.
      const rec = await put(s.apiUrl, key, 'during the stream', { session_id: 's1' });
      const first = await stream.nextEvent(3000);
      expect(first).toMatchObject({ id: 'evt_0000000000000002', event: 'artifact.created' });
      expect(JSON.parse(first.data)).toEqual({
        event_id: 'evt_0000000000000002',
        type: 'artifact.created',
        created_at: rec.created_at,
        data: rec,
      });
      const beat = await stream.next(2000);
      expect(beat.comment).toBe('heartbeat');
    } finally {
      stream.close();
    }
    // Missed while disconnected: sent first on reconnecting with Last-Event-ID, then the new ones.
    await put(s.apiUrl, key, 'missed 1');
    await put(s.apiUrl, key, 'missed 2');
    const again = await openSse(`${s.apiUrl}/v1/events/stream?types=artifact.created`, key, {
      'last-event-id': 'evt_0000000000000002',
    });
    try {
      expect((await again.nextEvent()).id).toBe('evt_0000000000000003');
      expect((await again.nextEvent()).id).toBe('evt_0000000000000004');
      await api(s.apiUrl, key, 'POST', '/v1/sessions/s1/seal'); // filtered out
      await put(s.apiUrl, key, 'new');
      expect((await again.nextEvent(3000)).id).toBe('evt_0000000000000006');
    } finally {
      again.close();
    }
  });

  it('starts after ?after=, and never shows another tenant’s events', async () => {
    const key = await s.createTenant('isolated');
    await put(s.apiUrl, key, 'one');
    const stream = await openSse(`${s.apiUrl}/v1/events/stream?after=0`, key);
    try {
      expect((await stream.nextEvent()).id).toBe('evt_0000000000000001');
      await put(s.apiUrl, other, 'not yours');
      await put(s.apiUrl, key, 'two');
      const next = await stream.nextEvent(3000);
      expect(next.id).toBe('evt_0000000000000002');
      expect(JSON.parse(next.data).data.filename).toBe('note.txt');
    } finally {
      stream.close();
    }
  });

  it('counts one request when opened, however long it runs', async () => {
    const key = await s.createTenant('counted');
    await s.core.requests.flush();
    const before = await usage(key); // this whoami counts itself
    const stream = await openSse(`${s.apiUrl}/v1/events/stream`, key);
    try {
      for (let i = 0; i < 3; i++) expect((await stream.next(2000)).comment ?? 'retry').toBeTruthy();
    } finally {
      stream.close();
    }
    await s.core.requests.flush();
    // The stream, and the whoami asking now.
    expect(await usage(key)).toBe(before + 2);
  });

  it('bounds the streams a tenant holds open, and frees one when it closes', async () => {
    const key = await s.createTenant('bounded');
    const one = await openSse(`${s.apiUrl}/v1/events/stream`, key);
    const two = await openSse(`${s.apiUrl}/v1/events/stream`, key);
    const third = await openSse(`${s.apiUrl}/v1/events/stream`, key);
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body).error.code).toBe('rate_limited');
    // Another tenant's streams are its own.
    const theirs = await openSse(`${s.apiUrl}/v1/events/stream`, other);
    expect(theirs.status).toBe(200);
    theirs.close();
    one.close();
    const { tenant } = await s.core.tenants.authenticate(key);
    await eventually(() => s.core.eventHub.open(tenant.id) < 2, 3000, 'the closed stream freed');
    const fourth = await openSse(`${s.apiUrl}/v1/events/stream`, key);
    expect(fourth.status).toBe(200);
    fourth.close();
    two.close();
  });

  it('ends the stream at the next heartbeat once its key is revoked', async () => {
    const key = await s.createTenant('revoked');
    const stream = await openSse(`${s.apiUrl}/v1/events/stream`, key);
    expect(stream.status).toBe(200);
    const caller = await s.core.tenants.authenticate(key);
    const keys = await s.core.deps.tenantStore.listApiKeys(caller.tenant.id);
    await s.core.deps.tenantStore.revokeApiKey(caller.tenant.id, keys[0]!.id, Date.now());
    await Promise.race([
      stream.ended,
      new Promise((_, rej) => setTimeout(() => rej(new Error('stream still open')), 3000)),
    ]);
  });
});
