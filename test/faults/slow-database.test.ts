import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultTestsRunnable } from './services.js';
import { type FaultStack, startFaultStack } from './stack.js';
import { expectNothingLost, Traffic } from './traffic.js';

/**
 * PostgreSQL made slow: another session holds an exclusive lock on `artifacts`, so every
 * statement on it waits, as under a long migration or a stuck transaction (ports 19340-19342).
 * With a 2 s statement bound, a 2 s connection bound and at most 20 calls queued for a
 * connection, every request is answered within the bounds, the excess is shed at once, and
 * memory stays flat.
 */
const runnable = faultTestsRunnable('test/faults/slow-database.test.ts');

/**
 * The server's own answer time (its request-duration histogram, so a loaded client does not
 * count) stays within the statement bound + the connection bound (4 s) and a margin for a
 * loaded 2-core machine: the 10 s bucket. A client-side deadline only catches hangs.
 */
const SERVER_BOUND_BUCKET = '10';
const HANG_MS = 30_000;

let stack: FaultStack;

describe.runIf(runnable)('slow PostgreSQL', () => {
  beforeAll(async () => {
    stack = await startFaultStack(19340, {
      CAIRN_DATABASE_STATEMENT_TIMEOUT_SECONDS: '2',
      CAIRN_DATABASE_CONNECT_TIMEOUT_SECONDS: '2',
      CAIRN_DATABASE_MAX_WAITING: '20',
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  it('requests time out at the documented bound with 503, excess load is shed, and all recovers', async () => {
    const keys = await Promise.all(
      [1, 2].map(async (i) => (await stack.server.core.tenants.create(`burst-${i}`, 'pro')).apiKey),
    );
    const t = new Traffic(stack.apiUrl, stack.key, { deadlineMs: HANG_MS }).start();
    const blocker = await stack.pg.client();
    try {
      await t.until(() => t.stored.size >= 10, '10 uploads before the slowdown');
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE artifacts IN ACCESS EXCLUSIVE MODE');
      const refused = t.counts.refused;
      await t.until(() => t.counts.refused >= refused + 10, 'requests refused by the statement bound');

      // 200 calls at once (100 per tenant, under the rate limit): each is refused in time, and
      // the pool's queue never holds more than 20 of them.
      const rssBefore = process.memoryUsage().rss;
      const answers = await Promise.all(
        keys.flatMap((key) =>
          Array.from({ length: 100 }, async () => {
            const r = await fetch(`${stack.apiUrl}/v1/artifacts?limit=1`, {
              headers: { authorization: `Bearer ${key}` },
              signal: AbortSignal.timeout(HANG_MS),
            });
            await r.arrayBuffer();
            return { status: r.status, retryAfter: r.headers.get('retry-after') };
          }),
        ),
      );
      expect(answers.filter((a) => a.status !== 503)).toEqual([]);
      expect(answers.every((a) => a.retryAfter !== null)).toBe(true);
      expect(process.memoryUsage().rss - rssBefore).toBeLessThan(200 * 1024 * 1024);
      const metrics = await (await fetch(`${stack.metricsUrl}/metrics`)).text();
      const waiting = /cairn_db_pool_connections\{state="waiting"\} (\d+)/.exec(metrics);
      expect(Number(waiting?.[1])).toBeLessThanOrEqual(20);
      // Shed, not queued: beyond the 20 waiting (and the 10 running), calls were refused at once.
      const shed = /cairn_db_pool_shed_total (\d+)/.exec(metrics);
      expect(Number(shed?.[1])).toBeGreaterThan(0);
      const series = 'listener="api",route="/v1/artifacts",method="GET"';
      const count = new RegExp(`cairn_http_request_duration_seconds_count\\{${series}\\} (\\d+)`).exec(metrics);
      const inBound = new RegExp(
        `cairn_http_request_duration_seconds_bucket\\{le="${SERVER_BOUND_BUCKET}",${series}\\} (\\d+)`,
      ).exec(metrics);
      expect(Number(count?.[1])).toBeGreaterThanOrEqual(200);
      expect(Number(inBound?.[1])).toBe(Number(count?.[1]));
    } finally {
      await blocker.query('ROLLBACK').catch(() => {});
      await blocker.end();
    }
    try {
      const stored = t.stored.size;
      await t.until(() => t.stored.size >= stored + 10, 'uploads once the database is fast again');
    } finally {
      await t.stop();
    }
    expect(t.violations).toEqual([]);
    await expectNothingLost(stack.apiUrl, stack.key, t);
  }, 180_000);
});
