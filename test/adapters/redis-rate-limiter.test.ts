import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/adapters/memory-limiter/memory-rate-limiter.js';
import { RedisRateLimiter } from '../../src/adapters/redis-limiter/index.js';
import { SLIDING_LOG_LUA } from '../../src/adapters/redis-limiter/sliding-log.lua.js';
import type { RateRule } from '../../src/ports/rate-limiter.js';
import { rateLimiterContract } from '../contract/rate-limiter.contract.js';

const url = process.env.CAIRN_TEST_REDIS_URL;

/** Why Redis cannot be used here, or null when it can. */
async function unavailable(): Promise<string | null> {
  if (!url) return 'CAIRN_TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379)';
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 3000,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return null;
  } catch (err) {
    return `Redis at ${url} is unreachable: ${(err as Error).message.replace(/\.$/, '')}`;
  } finally {
    probe.disconnect();
  }
}

const reason = await unavailable();
if (reason && !process.env.CI) {
  console.warn(`\n!!! SKIPPING the Redis limiter tests: ${reason}.\n!!! CI runs them; start Redis to run them here.\n`);
}

/** A random prefix per test: tests (and files) share one Redis without sharing windows. */
const prefix = () => `cairn-test:${randomBytes(6).toString('hex')}:`;

if (reason && process.env.CI) {
  describe('RedisRateLimiter', () => {
    beforeAll(() => {
      throw new Error(`CI must run the Redis limiter tests, but ${reason}.`);
    });
    it('needs Redis', () => {});
  });
} else {
  describe.skipIf(reason !== null)('RedisRateLimiter', () => {
    rateLimiterContract('redis', async () => {
      const limiter = new RedisRateLimiter({ url: url!, keyPrefix: prefix() });
      return { limiter, cleanup: () => limiter.close() };
    });

    describe('specifics', () => {
      let keyPrefix: string;
      let open: RedisRateLimiter[];
      let raw: Redis;
      const limiter = () => {
        const l = new RedisRateLimiter({ url: url!, keyPrefix });
        open.push(l);
        return l;
      };
      const rule: RateRule = { sustainedPerSecond: 10, burst: 20 }; // a 2 s window
      const T0 = 1_800_000_000_000;

      beforeEach(() => {
        keyPrefix = prefix();
        open = [];
        raw = new Redis(url!);
      });
      afterEach(async () => {
        const keys = await raw.keys(`${keyPrefix}*`);
        if (keys.length > 0) await raw.del(...keys);
        await raw.quit();
        await Promise.all(open.map((l) => l.close()));
      });

      it('decides exactly as the memory limiter on the same sequence', async () => {
        const redis = limiter();
        const memory = new MemoryRateLimiter();
        const rules: RateRule[] = [rule, { sustainedPerSecond: 100, burst: 200 }, { sustainedPerSecond: 3, burst: 5 }];
        // A deterministic walk of bursts and pauses across window edges, on three keys.
        let now = T0 + 123;
        let seed = 42;
        const rand = () => {
          seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
          return seed / 2_147_483_648;
        };
        let refused = 0;
        for (let i = 0; i < 1_500; i++) {
          const k = Math.floor(rand() * 3);
          const r = rules[k]!;
          now += rand() < 0.9 ? Math.floor(rand() * 40) : Math.floor(rand() * 5_000);
          const [a, b] = await Promise.all([redis.take(`k${k}`, r, now), memory.take(`k${k}`, r, now)]);
          expect(a, `step ${i} at ${now}`).toEqual(b);
          if (!a.allowed) refused++;
        }
        // The walk must exercise refusals (and their retry estimates), not only admissions.
        expect(refused).toBeGreaterThan(50);
      });

      it('counts one window across instances', async () => {
        const [a, b] = [limiter(), limiter()];
        const decisions = await Promise.all(
          Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).take('shared', rule, T0 + 10)),
        );
        expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
        const refused = decisions.find((d) => !d.allowed)!;
        expect(refused.remaining).toBe(0);
        expect(refused.retryAfterSeconds).toBeGreaterThan(0);
      });

      it('keeps a key for two windows, no longer', async () => {
        await limiter().take('ttl', rule, T0);
        const ttl = await raw.pttl(`${keyPrefix}ttl`);
        expect(ttl).toBeGreaterThan(3_000);
        expect(ttl).toBeLessThanOrEqual(4_000);
      });

      it('falls back to EVAL when the script cache was flushed', async () => {
        const l = limiter();
        await l.take('flush', rule, T0);
        await raw.script('FLUSH');
        const d = await l.take('flush', rule, T0 + 1);
        expect(d).toMatchObject({ allowed: true, remaining: 18 });
        // EVAL cached it again: the next call goes through EVALSHA.
        expect(await raw.script('EXISTS', createHash('sha1').update(SLIDING_LOG_LUA).digest('hex'))).toEqual([1]);
      });

      it('takes time from nowMs, not from the Redis clock', async () => {
        const l = limiter();
        for (let i = 0; i < 20; i++) await l.take('clock', rule, T0);
        expect((await l.take('clock', rule, T0)).allowed).toBe(false);
        // Two windows later by the caller's clock everything is forgotten, whatever Redis thinks.
        expect(await l.take('clock', rule, T0 + 4_000)).toMatchObject({ allowed: true, remaining: 19 });
      });
    });
  });
}
