import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { retryDelayMs } from '../../src/core/webhooks/deliverer.js';
import { WebhookService } from '../../src/core/webhooks/service.js';
import type { EventRecord } from '../../src/wire/index.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';
import { type CoreHarness, codeOf, coreHarness, HOUR_MS } from './harness.js';

/**
 * Webhooks in the core (issue 55): endpoints and their plan limit; deliveries signed as Standard
 * Webhooks says (checked with the `standardwebhooks` package), in order, retried with backoff,
 * disabled after 24 h of failures with an event; filters; secret rotation; the delivery log.
 * Deliveries go to a real receiver on loopback (the operator setting allows it here).
 */

let h: CoreHarness;
let rx: Receiver;
beforeEach(async () => {
  // The real time: receivers check that a signature's timestamp is recent.
  h = await coreHarness({ start: Date.now(), env: { CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1' } });
  rx = await startReceiver();
});
afterEach(async () => {
  await rx.close();
  await h.close();
});

const deliver = () => h.core.deliverer!.runOnce();

describe('webhook endpoints', () => {
  it('creates with a whsec_ secret shown once, lists, gets and deletes, within its tenant', async () => {
    const t = await h.tenant('acme');
    const other = await h.tenant('other');
    const made = await h.core.webhooks.create(t, { url: rx.url, types: ['artifact.created'], session_id: 'run-1' });
    expect(made).toMatchObject({
      url: rx.url,
      types: ['artifact.created'],
      session_id: 'run-1',
      status: 'active',
      disabled_at: null,
      failing_since: null,
      last_event_id: null,
    });
    expect(made.webhook_id).toMatch(/^wh_[A-Za-z0-9]{16}$/);
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const { secret: _secret, ...record } = made;
    expect(await h.core.webhooks.get(t, made.webhook_id)).toEqual(record);
    expect((await h.core.webhooks.list(t, {})).webhooks).toEqual([record]);
    expect(JSON.stringify(await h.core.webhooks.list(t, {}))).not.toContain('whsec_');
    expect(await codeOf(h.core.webhooks.get(other, made.webhook_id))).toBe('not_found');
    expect(await codeOf(h.core.webhooks.delete(other, made.webhook_id))).toBe('not_found');
    expect(await codeOf(h.core.webhooks.rotateSecret(other, made.webhook_id))).toBe('not_found');
    expect(await h.core.webhooks.delete(t, made.webhook_id)).toEqual({ webhook_id: made.webhook_id, deleted: true });
    expect(await codeOf(h.core.webhooks.get(t, made.webhook_id))).toBe('not_found');
  });

  it('allows Free 2 and Pro 20 webhooks', async () => {
    const free = await h.tenant('free', 'free');
    for (let i = 0; i < 2; i++) await h.core.webhooks.create(free, { url: rx.url });
    expect(await codeOf(h.core.webhooks.create(free, { url: rx.url }))).toBe('quota_exceeded');
    const pro = await h.tenant('pro', 'pro');
    for (let i = 0; i < 20; i++) await h.core.webhooks.create(pro, { url: rx.url });
    expect(await codeOf(h.core.webhooks.create(pro, { url: rx.url }))).toBe('quota_exceeded');
  });

  it('refuses URLs that are not http(s), carry credentials or name a private address', async () => {
    const t = await h.tenant('acme');
    const strict = new WebhookService({ ...h.core.deps, webhookAllowPrivate: false });
    for (const url of [
      'ftp://example.com/x',
      'not a url',
      'https://user:pass@example.com/x',
      'http://localhost:8080/x',
      'http://127.0.0.1/x',
      'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://169.254.169.254/latest/meta-data',
      'http://10.1.2.3/x',
      'http://metadata.google.internal/x',
    ]) {
      expect(await codeOf(strict.create(t, { url })), url).toBe('invalid_request');
    }
    expect(await codeOf(h.core.webhooks.create(t, { url: rx.url, types: ['artifact.made'] }))).toBe('invalid_request');
  });
});

describe('deliveries', () => {
  it('POSTs each new event, signed with Standard Webhooks, as the event the API lists', async () => {
    const t = await h.tenant('acme');
    await h.upload(t, 'before the webhook');
    const hook = await h.core.webhooks.create(t, { url: rx.url });
    const rec = await h.upload(t, 'hello', { sessionId: 'run-1' });
    await h.core.sessions.seal(t, 'run-1');
    expect(await deliver()).toBe(2);
    const payloads = rx.verified(hook.secret) as EventRecord[];
    const listed = (await h.core.events.list(t, { after: 'evt_0000000000000001' })).events;
    expect(payloads).toEqual(listed);
    expect(payloads[0]!.data).toEqual(rec);
    expect(rx.received.map((r) => r.headers['webhook-id'])).toEqual([
      `${hook.webhook_id}_evt_0000000000000002`,
      `${hook.webhook_id}_evt_0000000000000003`,
    ]);
    // A wrong secret does not verify.
    expect(() => rx.verified('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toThrow();
    expect(await deliver()).toBe(0);
    expect((await h.core.webhooks.get(t, hook.webhook_id)).last_event_id).toBe('evt_0000000000000003');
  });

  it('retries a failing event with growing waits, in order, and logs every attempt', async () => {
    const t = await h.tenant('acme');
    const hook = await h.core.webhooks.create(t, { url: rx.url });
    await h.upload(t, 'one');
    await h.upload(t, 'two');
    rx.answer = 500;
    expect(await deliver()).toBe(1);
    expect(await deliver()).toBe(0); // not due for 5 s
    h.clock.advance(retryDelayMs(1) - 1);
    expect(await deliver()).toBe(0);
    h.clock.advance(1);
    expect(await deliver()).toBe(1);
    h.clock.advance(retryDelayMs(2));
    rx.answer = 200;
    expect(await deliver()).toBe(2);
    const ids = rx.received.map((r) => JSON.parse(r.body).event_id);
    expect(ids).toEqual([
      'evt_0000000000000001',
      'evt_0000000000000001',
      'evt_0000000000000001',
      'evt_0000000000000002',
    ]);
    expect(new Set(rx.received.slice(0, 3).map((r) => r.headers['webhook-id'])).size).toBe(1);
    // Newest first; the last two were made in the same millisecond of the test's clock.
    const log = (await h.core.webhooks.deliveries(t, hook.webhook_id, {})).deliveries;
    expect(log.map((d) => [d.event_id, d.attempt, d.delivered, d.status_code]).sort()).toEqual([
      ['evt_0000000000000001', 1, false, 500],
      ['evt_0000000000000001', 2, false, 500],
      ['evt_0000000000000001', 3, true, 200],
      ['evt_0000000000000002', 1, true, 200],
    ]);
    expect(log.slice(2).map((d) => d.attempt)).toEqual([2, 1]);
    expect(retryDelayMs(1)).toBe(5_000);
    expect(retryDelayMs(2)).toBe(10_000);
    expect(retryDelayMs(30)).toBe(HOUR_MS);
  });

  it('disables an endpoint failing for 24 hours and records webhook.disabled', async () => {
    const t = await h.tenant('acme');
    const hook = await h.core.webhooks.create(t, { url: rx.url, types: ['artifact.created'] });
    const watcher = await h.core.webhooks.create(t, { url: `${rx.url}?watcher`, types: ['webhook.disabled'] });
    rx.answer = (r) => (r.headers['webhook-id']?.startsWith(hook.webhook_id) ? 503 : 200);
    await h.upload(t, 'never arrives');
    await deliver();
    let tries = 1;
    while ((await h.core.webhooks.get(t, hook.webhook_id)).status === 'active' && tries < 100) {
      h.clock.advance(HOUR_MS);
      await deliver();
      tries++;
    }
    const disabled = await h.core.webhooks.get(t, hook.webhook_id);
    expect(disabled.status).toBe('disabled');
    expect(tries).toBeGreaterThan(24);
    expect(tries).toBeLessThan(40);
    const events = (await h.core.events.list(t, { types: 'webhook.disabled' })).events;
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ webhook_id: hook.webhook_id, url: rx.url });
    // Disabled: no more attempts; the watcher heard of it.
    const before = rx.received.length;
    h.clock.advance(HOUR_MS);
    await deliver();
    const toHook = rx.received.slice(before).filter((r) => r.headers['webhook-id']?.startsWith(hook.webhook_id));
    expect(toHook).toEqual([]);
    // (Signed a day ahead of the real clock, which the package's timestamp check refuses: read the body.)
    const heard = rx.received.filter((r) => r.url.endsWith('?watcher')).map((r) => JSON.parse(r.body) as EventRecord);
    expect(heard.map((e) => e.type)).toEqual(['webhook.disabled']);
    expect(watcher.status).toBe('active');
    // Enabled again, it delivers what it missed.
    rx.answer = 200;
    await h.core.webhooks.enable(t, hook.webhook_id);
    await deliver();
    expect((await h.core.webhooks.get(t, hook.webhook_id)).status).toBe('active');
    expect(rx.received.at(-1)!.headers['webhook-id']).toBe(`${hook.webhook_id}_evt_0000000000000001`);
  });

  it('sends only the types and session asked for, and moves past the rest', async () => {
    const t = await h.tenant('acme');
    const hook = await h.core.webhooks.create(t, { url: rx.url, types: ['session.sealed'], session_id: 'run-2' });
    await h.upload(t, 'a', { sessionId: 'run-1' });
    await h.upload(t, 'b', { sessionId: 'run-2' });
    await h.core.sessions.seal(t, 'run-1');
    await h.core.sessions.seal(t, 'run-2');
    await h.upload(t, 'c', { sessionId: 'run-3' });
    expect(await deliver()).toBe(1);
    expect(
      (rx.verified(hook.secret) as EventRecord[]).map((e) => [e.type, (e.data as { session_id: string }).session_id]),
    ).toEqual([['session.sealed', 'run-2']]);
    expect((await h.core.webhooks.get(t, hook.webhook_id)).last_event_id).toBe('evt_0000000000000005');
  });

  it('signs with the new and, for a day, the old secret after a rotation', async () => {
    const t = await h.tenant('acme');
    const hook = await h.core.webhooks.create(t, { url: rx.url });
    const rotated = await h.core.webhooks.rotateSecret(t, hook.webhook_id);
    expect(rotated.secret).not.toBe(hook.secret);
    await h.upload(t, 'x');
    await deliver();
    expect(rx.verified(hook.secret)).toHaveLength(1);
    expect(rx.verified(rotated.secret)).toHaveLength(1);
    expect(rx.received[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
  });
});
