/**
 * Sliding-window rate limiting. A rule allows `burst` requests in any window of
 * `burst / sustainedPerSecond` seconds, so a full burst passes at once and the long-run
 * rate settles at `sustainedPerSecond`.
 */
export interface RateRule {
  sustainedPerSecond: number;
  burst: number;
}

export interface RateDecision {
  allowed: boolean;
  /**
   * Requests the window holds: the rule's burst (the `X-RateLimit-Limit` header), so `remaining`
   * counts down from it and never exceeds it.
   */
  limit: number;
  /** Requests left in the current window, never negative. */
  remaining: number;
  /**
   * Unix time in seconds when the oldest request counted in the window leaves it, i.e. when
   * `remaining` next rises (`X-RateLimit-Reset`); on a refusal, when a retry can pass.
   */
  resetAt: number;
  /** Whole seconds to wait before a retry can pass; 0 when allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one request against `key` (when allowed) and says whether it may proceed. */
  take(key: string, rule: RateRule, nowMs: number): Promise<RateDecision>;
  /** Resolves when a shared limiter's server answers (readiness); absent on in-process limiters. */
  ping?(): Promise<void>;
  close(): Promise<void>;
}
