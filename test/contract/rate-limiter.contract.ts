import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RateLimiter, RateRule } from '../../src/ports/rate-limiter.js';

/**
 * The RateLimiter contract: the sliding window of the spec (100/s sustained, 200 burst) driven
 * by the time passed in, so no test sleeps. Keys carry a random prefix so a shared Redis can run
 * the suite beside anything else.
 */
export function rateLimiterContract(
  name: string,
  make: () => Promise<{ limiter: RateLimiter; cleanup: () => Promise<void> }>,
): void {
  const RULE: RateRule = { sustainedPerSecond: 100, burst: 200 };
  const T0 = Date.UTC(2030, 0, 1);

  describe(`RateLimiter contract: ${name}`, () => {
    let limiter: RateLimiter;
    let cleanup: () => Promise<void>;
    let prefix: string;
    const key = (k: string) => `${prefix}:${k}`;

    beforeEach(async () => {
      ({ limiter, cleanup } = await make());
      prefix = `rl-contract-${randomBytes(6).toString('hex')}`;
    });
    afterEach(async () => cleanup());

    async function burst(k: string, n: number, at: number) {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await limiter.take(key(k), RULE, at));
      return out;
    }

    it('lets a burst of 200 through at one instant and refuses the 201st', async () => {
      const decisions = await burst('a', 200, T0);
      expect(decisions.every((d) => d.allowed)).toBe(true);
      expect(decisions[0]).toMatchObject({ limit: 200, remaining: 199 });
      // One window: what is left never exceeds what the window holds.
      for (const d of decisions) expect(d.remaining).toBeLessThanOrEqual(d.limit);
      expect(decisions[199]?.remaining).toBe(0);
      const refused = await limiter.take(key('a'), RULE, T0);
      expect(refused.allowed).toBe(false);
      expect(refused.remaining).toBe(0);
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    });

    it('reports as resetAt the Unix second when the oldest counted request frees its slot', async () => {
      const first = await limiter.take(key('reset'), RULE, T0 + 500);
      expect(first.resetAt).toBe(Math.ceil((T0 + 2500) / 1000));
      expect(first.retryAfterSeconds).toBe(0);
      const second = await limiter.take(key('reset'), RULE, T0 + 1500);
      expect(second.resetAt).toBe(first.resetAt);
      expect(second.remaining).toBe(198);
    });

    it('admits again once retryAfterSeconds have passed', async () => {
      await burst('retry', 200, T0);
      const refused = await limiter.take(key('retry'), RULE, T0 + 10);
      expect(refused.allowed).toBe(false);
      const later = await limiter.take(key('retry'), RULE, T0 + 10 + refused.retryAfterSeconds * 1000);
      expect(later.allowed).toBe(true);
    });

    it('holds 100 requests per second sustained after the burst has drained', async () => {
      await burst('steady', 200, T0);
      // Two windows later the burst no longer counts; then 10 requests every 100 ms for 10 s.
      const start = T0 + 4000;
      let refused = 0;
      for (let tick = 0; tick < 100; tick++) {
        for (const d of await burst('steady', 10, start + tick * 100)) if (!d.allowed) refused++;
      }
      expect(refused).toBe(0);
    });

    it('refuses a sustained rate well above 100 per second', async () => {
      let allowed = 0;
      for (let tick = 0; tick < 100; tick++) {
        for (const d of await burst('flood', 30, T0 + tick * 100)) if (d.allowed) allowed++;
      }
      // 10 s at 300/s offered: about 100/s (plus the initial burst) may pass.
      expect(allowed).toBeGreaterThan(900);
      expect(allowed).toBeLessThanOrEqual(1000 + 200);
    });

    it("keeps keys apart: tenant A's burst does not touch tenant B", async () => {
      await burst('tenant-a', 201, T0);
      const b = await limiter.take(key('tenant-b'), RULE, T0);
      expect(b).toMatchObject({ allowed: true, remaining: 199 });
    });

    it('honours other rules, such as 10 per minute for a public endpoint', async () => {
      const rule: RateRule = { sustainedPerSecond: 10 / 60, burst: 10 };
      for (let i = 0; i < 10; i++) expect((await limiter.take(key('slow'), rule, T0 + i)).allowed).toBe(true);
      const refused = await limiter.take(key('slow'), rule, T0 + 20);
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterSeconds).toBeGreaterThan(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(120);
    });
  });
}
