import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/adapters/memory-limiter/memory-rate-limiter.js';
import { rateLimiterContract } from '../contract/rate-limiter.contract.js';

rateLimiterContract('memory', async () => {
  const limiter = new MemoryRateLimiter();
  return { limiter, cleanup: () => limiter.close() };
});

describe('MemoryRateLimiter specifics', () => {
  it('forgets idle keys, so memory stays bounded', async () => {
    const limiter = new MemoryRateLimiter();
    const rule = { sustainedPerSecond: 100, burst: 200 };
    for (let i = 0; i < 10_000; i++) await limiter.take(`k${i}`, rule, 0);
    // Far later, the eviction pass (every 10,000 calls) drops them all.
    for (let i = 0; i < 10_000; i++) await limiter.take('busy', rule, 60_000 + i);
    const size = (limiter as unknown as { windows: Map<string, unknown> }).windows.size;
    expect(size).toBeLessThan(10);
  });
});
