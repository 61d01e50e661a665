import { durationSeconds } from '../shared/duration.js';
import { CairnError, invalid } from './errors.js';
import { LIMITS, PLANS, type PlanName } from './plans.js';

/**
 * The TTL forms the API takes: `never`, or a count of seconds, minutes, hours or days (`30s`,
 * `15m`, `12h`, `7d`). The count has no digit cap, so one duration is the same TTL in every unit:
 * 365 days is `365d`, `8760h`, `525600m` and `31536000s` alike. The MCP tools' schema
 * (src/mcp/context.ts) states the same rule for the agent to read.
 */
const TTL_FORMAT = /^(?:never|[1-9]\d*[smhd])$/;

/** A long duration cut for a message (the caller knows what it sent). */
export function shownDuration(text: string): string {
  const t = text.trim();
  return t.length > 24 ? `${t.slice(0, 20)}…${t.slice(-1)}` : t;
}

/**
 * When an artifact stored now with `ttl` expires. Default 30 days; `never` means the longest the
 * plan allows; longer is refused (a count too large for a number is Infinity, so it is refused
 * the same way).
 */
export function expiresAtFor(ttl: unknown, plan: PlanName, now: number, upgradeUrl?: string): number {
  const max = PLANS[plan].maxTtlSeconds;
  if (ttl === undefined || ttl === null || ttl === '') return now + LIMITS.defaultTtlSeconds * 1000;
  if (typeof ttl !== 'string') throw invalid("ttl must be a string such as '7d', '12h' or 'never'.");
  const text = ttl.trim();
  if (!TTL_FORMAT.test(text)) throw invalid("ttl must look like '7d', '12h', '30m', '45s' or 'never'.");
  if (text === 'never') return now + max * 1000;
  const seconds = durationSeconds(text) as number;
  if (seconds > max) {
    throw new CairnError(
      'ttl_exceeds_plan_limit',
      `ttl ${shownDuration(text)} is longer than the ${plan} plan allows (${max / 86_400} days).`,
      upgradeUrl === undefined ? {} : { upgradeUrl },
    );
  }
  return now + seconds * 1000;
}
