import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultTestsRunnable } from './services.js';
import { type FaultStack, FreezableClock, startFaultStack } from './stack.js';
import { expectNothingLost, Traffic } from './traffic.js';

/** Redis killed and started again under traffic (ports 19320-19322). */
const runnable = faultTestsRunnable('test/faults/redis.test.ts');

let stack: FaultStack;
const clock = new FreezableClock();

const logged = (msg: RegExp) => stack.logs.some((l) => msg.test(l.msg ?? ''));
const LOST = /^Redis unreachable: rate limits are enforced per instance/;
const BACK = /^Redis reachable again/;

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${stack.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

/**
 * A burst of `n` calls from a tenant of its own, with time held still (so no window refills
 * however slowly the calls go out): how many the limiter refused.
 */
async function burst(n: number): Promise<number> {
  const key = (await stack.server.core.tenants.create(`burst-${Date.now()}-${Math.random()}`, 'free')).apiKey;
  clock.freeze();
  try {
    return await countLimited(key, n);
  } finally {
    clock.thaw();
  }
}

async function countLimited(key: string, n: number): Promise<number> {
  let limited = 0;
  for (let done = 0; done < n; done += 50) {
    const batch = await Promise.all(
      Array.from({ length: 50 }, () =>
        fetch(`${stack.apiUrl}/v1/artifacts?limit=1`, { headers: { authorization: `Bearer ${key}` } }),
      ),
    );
    for (const r of batch) {
      await r.arrayBuffer();
      if (r.status === 429) {
        expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
        limited++;
      } else expect(r.status).toBe(200);
    }
  }
  return limited;
}

describe.runIf(runnable)('Redis faults', () => {
  beforeAll(async () => {
    stack = await startFaultStack(19320, {}, clock);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  it('down: limits hold per instance (logged once), traffic goes on; back: shared limits again, no restart', async () => {
    const t = new Traffic(stack.apiUrl, stack.key).start();
    try {
      await t.until(() => t.stored.size >= 10, '10 uploads before the fault');
      expect(await metric('cairn_rate_limiter_degraded')).toBe(0);
      await stack.redis.kill();
      await t.until(() => logged(LOST), 'the log line saying limits are per instance');
      let stored = t.stored.size;
      await t.until(() => t.stored.size >= stored + 10, 'uploads while Redis is down');
      expect(await metric('cairn_rate_limiter_degraded')).toBe(1);
      // Never unlimited: the per-instance windows refuse what passes the plan's burst of 200.
      expect(await burst(300)).toBe(100);
      const down = await fetch(`${stack.metricsUrl}/ready`);
      expect(down.status).toBe(503);
      expect(((await down.json()) as { checks: Record<string, string> }).checks.redis).toMatch(/^failed/);

      await stack.redis.start();
      await t.until(() => logged(BACK), 'the log line saying limits are shared again', 30_000);
      stored = t.stored.size;
      await t.until(() => t.stored.size >= stored + 10, 'uploads after Redis is back');
      expect(await metric('cairn_rate_limiter_degraded')).toBe(0);
      expect((await fetch(`${stack.metricsUrl}/ready`)).status).toBe(200);
      expect(await burst(300)).toBe(100);
    } finally {
      await t.stop();
    }
    expect(stack.logs.filter((l) => LOST.test(l.msg ?? ''))).toHaveLength(1);
    expect(t.violations).toEqual([]);
    await expectNothingLost(stack.apiUrl, stack.key, t);
  }, 180_000);
});
