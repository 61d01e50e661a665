import { CairnClient, CairnError, type EventRecord, verifyWebhook } from 'cairn-store-sdk';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Balancer } from '../helpers/balancer.js';
import { eventually } from '../helpers/e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startReceiver } from '../helpers/webhook-receiver.js';
import { clientFor } from './fixtures.js';

/** The TypeScript SDK's change feed: list, iterate, follow (through a dropped connection), webhooks, verify. */

let s: TestServer;
let client: CairnClient;
beforeAll(async () => {
  s = await startTestServer({
    env: { CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1', CAIRN_EVENT_HEARTBEAT_SECONDS: '0.5' },
  });
  client = clientFor(s);
});
afterAll(async () => s?.close());

describe('events', () => {
  it('listEvents and iterateEvents, with filters', async () => {
    const key = await s.createTenant('sdk-list');
    const c = new CairnClient({ apiKey: key, baseUrl: s.apiUrl });
    for (let i = 0; i < 3; i++) await c.uploadBytes(`n${i}`, { filename: `${i}.txt`, sessionId: 'r' });
    await c.sealSession('r');
    const page = await c.listEvents({ limit: 2 });
    expect(page.events.map((e) => e.event_id)).toEqual(['evt_0000000000000001', 'evt_0000000000000002']);
    const all: string[] = [];
    for await (const e of c.iterateEvents({ limit: 1 })) all.push(e.type);
    expect(all).toEqual(['artifact.created', 'artifact.created', 'artifact.created', 'session.sealed']);
    expect((await c.listEvents({ types: ['session.*'] })).events).toHaveLength(1);
    expect((await c.listEvents({ after: 'evt_0000000000000003' })).events.map((e) => e.type)).toEqual([
      'session.sealed',
    ]);
  });

  it('followEvents yields each event once, in order, across a dropped connection', async () => {
    const key = await s.createTenant('sdk-follow');
    const balancer = await new Balancer().start();
    const port = Number(new URL(s.apiUrl).port);
    balancer.routeTo(port);
    const c = new CairnClient({ apiKey: key, baseUrl: balancer.url });
    const direct = new CairnClient({ apiKey: key, baseUrl: s.apiUrl });
    const ctl = new AbortController();
    const got: EventRecord[] = [];
    const connects: (string | undefined)[] = [];
    const following = (async () => {
      for await (const e of c.followEvents({ signal: ctl.signal, onConnect: (after) => connects.push(after) }))
        got.push(e);
    })();
    try {
      const { tenant } = await s.core.tenants.authenticate(key);
      await eventually(() => s.core.eventHub.open(tenant.id) > 0, 3000, 'the stream');
      await direct.uploadBytes('one', { filename: '1.txt' });
      await eventually(() => got.length === 1, 3000, 'the first event');
      balancer.dropAll();
      await direct.uploadBytes('two', { filename: '2.txt' });
      await direct.uploadBytes('three', { filename: '3.txt' });
      await eventually(() => got.length === 3, 5000, 'the events after the drop');
      expect(got.map((e) => e.event_id)).toEqual([
        'evt_0000000000000001',
        'evt_0000000000000002',
        'evt_0000000000000003',
      ]);
      expect(connects.length).toBeGreaterThanOrEqual(2);
      expect(connects[1]).toBe('evt_0000000000000001');
    } finally {
      ctl.abort();
      await following;
      await balancer.close();
    }
  });

  it('a follower refused for good (a bad key) throws instead of retrying', async () => {
    const bad = new CairnClient({
      apiKey: 'ak_live_00000000000000000000000000000000',
      baseUrl: s.apiUrl,
      maxRetries: 0,
    });
    const it = bad.followEvents()[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toMatchObject({ code: 'unauthorized' });
  });
});

describe('webhooks', () => {
  it('creates, lists, rotates and deletes; verifyWebhook accepts what standardwebhooks accepts', async () => {
    const rx = await startReceiver();
    try {
      const made = await client.createWebhook({ url: rx.url, types: ['artifact.created'] });
      expect((await client.listWebhooks()).webhooks.map((w) => w.webhook_id)).toContain(made.webhook_id);
      expect((await client.getWebhook(made.webhook_id)).status).toBe('active');
      const rec = await client.uploadBytes('hooked', { filename: 'h.txt' });
      await eventually(() => rx.received.length === 1, 5000, 'the delivery');
      const { headers, body } = rx.received[0]!;
      const ours = verifyWebhook(made.secret, headers, body);
      expect(ours).toEqual(new Webhook(made.secret).verify(body, headers));
      expect(ours.data).toEqual(rec);
      expect(() => verifyWebhook(made.secret, headers, `${body} `)).toThrow(CairnError);
      expect(() => verifyWebhook(made.secret, headers, body, { now: Date.now() + 3_600_000 })).toThrow(/timestamp/);
      const rotated = await client.rotateWebhookSecret(made.webhook_id);
      expect(() => verifyWebhook(rotated.secret, headers, body)).toThrow(/No signature/);
      expect((await client.listWebhookDeliveries(made.webhook_id)).deliveries[0]).toMatchObject({ delivered: true });
      expect((await client.enableWebhook(made.webhook_id)).status).toBe('active');
      expect(await client.deleteWebhook(made.webhook_id)).toEqual({ webhook_id: made.webhook_id, deleted: true });
    } finally {
      await rx.close();
    }
  });
});
