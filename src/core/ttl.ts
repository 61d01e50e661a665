import { CairnError, invalid } from './errors.js';
import { LIMITS, PLANS, type PlanName } from './plans.js';
import { parseDuration } from './time.js';

/**
 * TTL as `Nh`, `Nd` or `never` (also `Nm`/`Ns` for tests and short-lived scratch files).
 * Default 30 days; `never` means the longest the plan allows; longer is refused.
 */
export function expiresAtFor(ttl: unknown, plan: PlanName, now: number, upgradeUrl?: string): number {
  const max = PLANS[plan].maxTtlSeconds;
  if (ttl === undefined || ttl === null || ttl === '') return now + LIMITS.defaultTtlSeconds * 1000;
  if (typeof ttl !== 'string') throw invalid("ttl must be a string such as '7d', '12h' or 'never'.");
  if (ttl.trim() === 'never') return now + max * 1000;
  const seconds = parseDuration(ttl);
  if (seconds === null) throw invalid("ttl must look like '7d', '12h' or 'never'.");
  if (seconds > max) {
    throw new CairnError(
      'ttl_exceeds_plan_limit',
      `ttl ${ttl} is longer than the ${plan} plan allows (${max / 86_400} days).`,
      upgradeUrl === undefined ? {} : { upgradeUrl },
    );
  }
  return now + seconds * 1000;
}
