import type { RateDecision, RateRule } from '../../ports/rate-limiter.js';

/** Window length of a rule: a full burst spread at the sustained rate (200 at 100/s → 2 s). */
export const windowMsOf = (rule: RateRule) => Math.round((rule.burst / rule.sustainedPerSecond) * 1000);

/**
 * The sliding-window log: a request is admitted when fewer than `burst` admitted requests fall
 * in the window `(now - W, now]`. Exact (unlike a two-bucket counter, which refuses a client
 * sending at precisely the sustained rate), and cheap at these sizes: at most `burst` timestamps
 * per key. Pure, so the memory adapter and the Redis Lua script follow it step by step.
 *
 * `hits` holds the admitted timestamps in ascending order and is updated in place.
 */
export function slidingLog(hits: number[], rule: RateRule, nowMs: number): RateDecision {
  const windowMs = windowMsOf(rule);
  let expired = 0;
  while (expired < hits.length && (hits[expired] as number) <= nowMs - windowMs) expired++;
  if (expired > 0) hits.splice(0, expired);
  const allowed = hits.length < rule.burst;
  if (allowed) hits.push(nowMs);
  const oldest = hits[0] ?? nowMs;
  // The moment the oldest counted request leaves the window and frees a slot.
  const freesAt = oldest + windowMs;
  return {
    allowed,
    limit: rule.burst,
    remaining: Math.max(0, rule.burst - hits.length),
    resetAt: Math.ceil(freesAt / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((freesAt - nowMs) / 1000)),
  };
}
