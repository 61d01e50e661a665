import type { RateDecision, RateLimiter, RateRule } from '../../ports/rate-limiter.js';
import { slidingLog, windowMsOf } from './sliding-window.js';

interface Entry {
  hits: number[];
  windowMs: number;
}

/**
 * The embedded limiter: the sliding-window log in a Map. One process only; the Redis adapter
 * runs the same algorithm for many instances.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, Entry>();
  private calls = 0;

  async take(key: string, rule: RateRule, nowMs: number): Promise<RateDecision> {
    let entry = this.windows.get(key);
    if (!entry) {
      entry = { hits: [], windowMs: windowMsOf(rule) };
      this.windows.set(key, entry);
    }
    if (++this.calls % 10_000 === 0) this.evictIdle(nowMs);
    return slidingLog(entry.hits, rule, nowMs);
  }

  /** A key whose newest hit has left its window carries no information any more. */
  private evictIdle(nowMs: number): void {
    for (const [key, e] of this.windows) {
      const newest = e.hits.at(-1);
      if (newest === undefined || newest <= nowMs - e.windowMs) this.windows.delete(key);
    }
  }

  async close(): Promise<void> {
    this.windows.clear();
  }
}
