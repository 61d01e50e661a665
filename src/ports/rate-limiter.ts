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
  /** Requests per second allowed (the `X-RateLimit-Limit` header). */
  limit: number;
  /** Requests left in the current window, never negative. */
  remaining: number;
  /** Unix time in seconds when the current window ends (`X-RateLimit-Reset`). */
  resetAt: number;
  /** Whole seconds to wait before a retry can pass; 0 when allowed. */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /** Counts one request against `key` (when allowed) and says whether it may proceed. */
  take(key: string, rule: RateRule, nowMs: number): Promise<RateDecision>;
  close(): Promise<void>;
}
