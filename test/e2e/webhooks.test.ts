import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectError, put } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

/** /v1/webhooks over HTTP: the routes, their errors and tenant isolation, and a live delivery. */

let s: TestServer;
let rx: Receiver;
beforeAll(async () => {
  s = await startTestServer({ env: { CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1' } });
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
  await s?.close();
});

describe('/v1/webhooks', () => {
  it('creates, lists, reads, rotates, logs and deletes, for its own tenant only', async () => {
    const key = await s.createTenant('hooks');
    const other = await s.createTenant('not-hooks');
    const made = await api(s.apiUrl, key, 'POST', '/v1/webhooks', { url: rx.url, session_id: 'run-1' });
    expect(made.status, made.text).toBe(201);
    expect(made.json.secret).toMatch(/^whsec_/);
    const id = made.json.webhook_id;
    const listed = await api(s.apiUrl, key, 'GET', '/v1/webhooks');
    expect(listed.json).toMatchObject({ has_more: false, next_cursor: null });
    expect(listed.json.webhooks.map((w: { webhook_id: string }) => w.webhook_id)).toEqual([id]);
    expect(listed.text).not.toContain('whsec_');
    expectError(await api(s.apiUrl, other, 'GET', `/v1/webhooks/${id}`), 404, 'not_found');
    expectError(await api(s.apiUrl, other, 'DELETE', `/v1/webhooks/${id}`), 404, 'not_found');
    expectError(await api(s.apiUrl, other, 'GET', `/v1/webhooks/${id}/deliveries`), 404, 'not_found');
    expect((await api(s.apiUrl, other, 'GET', '/v1/webhooks')).json.webhooks).toEqual([]);

    const rec = await put(s.apiUrl, key, 'watched', { session_id: 'run-1' });
    await eventually(() => rx.received.length >= 1, 5000, 'the delivery');
    const [payload] = rx.verified(made.json.secret) as { data: unknown }[];
    expect(payload!.data).toEqual(rec);
    await eventually(
      async () => (await api(s.apiUrl, key, 'GET', `/v1/webhooks/${id}/deliveries`)).json.deliveries.length === 1,
      3000,
      'the log',
    );
    const log = await api(s.apiUrl, key, 'GET', `/v1/webhooks/${id}/deliveries`);
    expect(log.json.deliveries[0]).toMatchObject({
      event_id: 'evt_0000000000000001',
      attempt: 1,
      delivered: true,
      status_code: 200,
    });

    const rotated = await api(s.apiUrl, key, 'POST', `/v1/webhooks/${id}/rotate-secret`);
    expect(rotated.json.secret).not.toBe(made.json.secret);
    expect((await api(s.apiUrl, key, 'DELETE', `/v1/webhooks/${id}`)).json).toEqual({ webhook_id: id, deleted: true });
    expectError(await api(s.apiUrl, key, 'GET', `/v1/webhooks/${id}`), 404, 'not_found');
  });

  it('refuses bad bodies with the error envelope, and needs a key', async () => {
    expectError(await api(s.apiUrl, s.apiKey, 'POST', '/v1/webhooks', {}), 400, 'invalid_request');
    expectError(
      await api(s.apiUrl, s.apiKey, 'POST', '/v1/webhooks', { url: 'ftp://x.example/' }),
      400,
      'invalid_request',
    );
    expectError(
      await api(s.apiUrl, s.apiKey, 'POST', '/v1/webhooks', { url: rx.url, types: ['nope'] }),
      400,
      'invalid_request',
    );
    expectError(
      await api(s.apiUrl, s.apiKey, 'POST', '/v1/webhooks', { url: rx.url, extra: 1 }),
      400,
      'invalid_request',
    );
    expectError(await api(s.apiUrl, null, 'GET', '/v1/webhooks'), 401, 'unauthorized');
    expectError(await api(s.apiUrl, s.apiKey, 'GET', '/v1/webhooks/wh_nope'), 404, 'not_found');
  });
});
