import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RateDecision, RateLimiter, RateRule } from '../../ports/rate-limiter.js';
import { MemoryRateLimiter } from '../memory-limiter/memory-rate-limiter.js';
import { SLIDING_LOG_LUA } from './sliding-log.lua.js';

export interface RedisRateLimiterOptions {
  /** `redis://[:password@]host:6379[/db]` or `rediss://` for TLS. */
  url: string;
  /** Prepended to every key, so several deployments (or tests) can share one Redis. Default `cairn:rl:`. */
  keyPrefix?: string;
  /**
   * Decides while Redis is unreachable: this instance's own windows (so limits still hold, per
   * instance, instead of none or of refusing every request). Default: a fresh memory limiter.
   */
  fallback?: RateLimiter;
  /** Told once when Redis is lost and once when it answers again. */
  onOutage?: (event: 'lost' | 'recovered', err?: unknown) => void;
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
  private readonly fallback: RateLimiter;
  private readonly onOutage: NonNullable<RedisRateLimiterOptions['onOutage']>;
  /** Whether decisions are being made by the per-instance fallback (Redis is unreachable). */
  degraded = false;

  constructor(options: RedisRateLimiterOptions) {
    this.prefix = options.keyPrefix ?? 'cairn:rl:';
    this.fallback = options.fallback ?? new MemoryRateLimiter();
    this.onOutage = options.onOutage ?? (() => {});
    this.redis = new Redis(options.url, {
      // Fail a request fast when Redis is away instead of queueing it for a long reconnect.
      maxRetriesPerRequest: 2,
      connectTimeout: 5_000,
    });
    // Connection errors also reject the pending commands; without a listener ioredis logs each.
    this.redis.on('error', () => {});
  }

  async take(key: string, rule: RateRule, nowMs: number): Promise<RateDecision> {
    // While ioredis is reconnecting a command would wait in its queue; decide locally at once.
    if (this.redis.status === 'reconnecting' || this.redis.status === 'close') {
      this.lost(new Error(`Redis connection is ${this.redis.status}`));
      return this.fallback.take(key, rule, nowMs);
    }
    let decision: RateDecision;
    try {
      decision = await this.takeShared(key, rule, nowMs);
    } catch (err) {
      this.lost(err);
      return this.fallback.take(key, rule, nowMs);
    }
    if (this.degraded) {
      this.degraded = false;
      this.onOutage('recovered');
    }
    return decision;
  }

  private lost(err: unknown): void {
    if (this.degraded) return;
    this.degraded = true;
    this.onOutage('lost', err);
  }

  /** Answers when Redis does (for the readiness check); rejects at once while it is unreachable. */
  async ping(): Promise<void> {
    if (this.redis.status !== 'ready') throw new Error(`Redis connection is ${this.redis.status}`);
    await this.redis.ping();
  }

  private async takeShared(key: string, rule: RateRule, nowMs: number): Promise<RateDecision> {
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
    await this.fallback.close();
  }
}
