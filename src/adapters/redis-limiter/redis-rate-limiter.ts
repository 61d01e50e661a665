import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RateDecision, RateLimiter, RateRule } from '../../ports/rate-limiter.js';
import { SLIDING_LOG_LUA } from './sliding-log.lua.js';

export interface RedisRateLimiterOptions {
  /** `redis://[:password@]host:6379[/db]` or `rediss://` for TLS. */
  url: string;
  /** Prepended to every key, so several deployments (or tests) can share one Redis. Default `cairn:rl:`. */
  keyPrefix?: string;
}

const SHA = createHash('sha1').update(SLIDING_LOG_LUA).digest('hex');

/**
 * The scale-out limiter: the memory limiter's sliding-window log, kept in Redis so every Cairn
 * instance counts against the same windows. One script call per request: EVALSHA, falling back
 * to EVAL (which also caches the script) when Redis answers NOSCRIPT after a restart or flush.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;
  private readonly prefix: string;

  constructor(options: RedisRateLimiterOptions) {
    this.prefix = options.keyPrefix ?? 'cairn:rl:';
    this.redis = new Redis(options.url, {
      // Fail a request fast when Redis is away instead of queueing it for a long reconnect.
      maxRetriesPerRequest: 2,
      connectTimeout: 5_000,
    });
    // Connection errors also reject the pending commands; without a listener ioredis logs each.
    this.redis.on('error', () => {});
  }

  async take(key: string, rule: RateRule, nowMs: number): Promise<RateDecision> {
    const args = [1, this.prefix + key, rule.burst, rule.sustainedPerSecond, Math.floor(nowMs)] as const;
    let reply: unknown;
    try {
      reply = await this.redis.evalsha(SHA, ...args);
    } catch (err) {
      if (!(err instanceof Error) || !err.message.includes('NOSCRIPT')) throw err;
      reply = await this.redis.eval(SLIDING_LOG_LUA, ...args);
    }
    const [allowed, remaining, resetAt, retryAfter] = reply as [number, string, string, string];
    return {
      allowed: allowed === 1,
      limit: rule.burst,
      remaining: Number(remaining),
      resetAt: Number(resetAt),
      retryAfterSeconds: Number(retryAfter),
    };
  }

  async close(): Promise<void> {
    if (this.redis.status === 'end') return;
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
