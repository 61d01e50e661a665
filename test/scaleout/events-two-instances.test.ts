import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, put } from '../helpers/e2e.js';
import { scaleoutSet, scaleoutUnavailable } from '../helpers/scaleout.js';
import { api } from '../helpers/server.js';
import { openSse } from '../helpers/sse.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * The change feed across a scale-out set: two servers (each its own runtime, sharing nothing but
 * PostgreSQL, Redis and S3); an event made on A reaches a stream opened on B within a second.
 * B learns of it by polling the feed heads (EventHub, every 200 ms); the figures are printed.
 */

const reason = await scaleoutUnavailable();

describe.skipIf(reason !== null)('events across two instances on PostgreSQL', () => {
  let set: Awaited<ReturnType<typeof scaleoutSet>>;
  const instance = () => set.instance();

  beforeAll(async () => {
    // The receiver is on loopback: the operator setting that lets webhooks reach it.
    set = await scaleoutSet({ CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1' });
  });
  afterAll(async () => set?.close());

  it('an upload on A reaches an SSE client on B within a second', async () => {
    const a = await instance();
    const b = await instance();
    const { apiKey } = await a.core.tenants.create('feed', 'pro');
    const stream = await openSse(`${b.config.apiOrigin}/v1/events/stream`, apiKey);
    const delays: number[] = [];
    try {
      expect(stream.status).toBe(200);
      for (let i = 0; i < 10; i++) {
        const rec = await put(a.config.apiOrigin, apiKey, `upload ${i}`);
        const answered = performance.now();
        const got = await stream.nextEvent(2000);
        delays.push(performance.now() - answered);
        expect(JSON.parse(got.data).data.artifact_id).toBe(rec.artifact_id);
        // Spread over the poll period, so the figures are not all of one phase.
        await new Promise((r) => setTimeout(r, 37 * (i + 1)));
      }
    } finally {
      stream.close();
    }
    const sorted = [...delays].sort((x, y) => x - y);
    console.log(
      `A→B event delay over ${delays.length} uploads: median ${sorted[5]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms`,
    );
    expect(sorted.at(-1)!).toBeLessThan(1000);
  });

  it('two instances deliver each webhook event exactly once, in order, signed', async () => {
    const a = set.servers[0] ?? (await instance());
    const b = set.servers[1] ?? (await instance());
    const rx = await startReceiver();
    try {
      const { apiKey } = await a.core.tenants.create('hooked', 'pro');
      const made = await api(a.config.apiOrigin, apiKey, 'POST', '/v1/webhooks', {
        url: rx.url,
        types: ['artifact.created'],
      });
      expect(made.status, made.text).toBe(201);
      const n = 30;
      await Promise.all(
        Array.from({ length: n }, (_, i) => put((i % 2 ? b : a).config.apiOrigin, apiKey, `upload ${i}`)),
      );
      await eventually(() => rx.received.length >= n, 15_000, `${n} deliveries`);
      // Both deliverers keep running: nothing more may arrive.
      await new Promise((r) => setTimeout(r, 1500));
      expect(rx.received).toHaveLength(n);
      const events = rx.verified(made.json.secret) as { event_id: string }[];
      const ids = events.map((e) => e.event_id);
      expect(ids).toEqual([...ids].sort());
      expect(new Set(ids).size).toBe(n);
      const log = await api(
        b.config.apiOrigin,
        apiKey,
        'GET',
        `/v1/webhooks/${made.json.webhook_id}/deliveries?limit=200`,
      );
      expect(log.json.deliveries).toHaveLength(n);
      expect(
        log.json.deliveries.every((d: { delivered: boolean; attempt: number }) => d.delivered && d.attempt === 1),
      ).toBe(true);
    } finally {
      await rx.close();
    }
  });
});
