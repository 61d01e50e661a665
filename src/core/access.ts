import type { TenantRow } from '../ports/metadata-store.js';
import type { RateDecision, RateRule } from '../ports/rate-limiter.js';
import type { CoreDeps } from './context.js';
import { CairnError } from './errors.js';
import { ANONYMOUS_RATE_LIMIT, PLANS } from './plans.js';
import type { RequestCounter } from './request-counter.js';
import type { Caller } from './tenants.js';
import { monthKey } from './time.js';

/** The ports and settings this service uses, of CoreDeps. */
export type AccessDeps = Pick<CoreDeps, 'clock' | 'limiter' | 'upgradeUrl'>;

/**
 * Admission of every API request: a rate-limit decision first (the tenant's, or the client IP's
 * when no tenant is named), then, for authenticated calls, suspension and the monthly request
 * quota. The decision is returned, or attached to the error as `decision`, so every response,
 * refusals included, can carry the X-RateLimit-* headers.
 */
export class RateLimitedError extends CairnError {
  constructor(readonly decision: RateDecision) {
    super('rate_limited', `Rate limit exceeded; retry in ${decision.retryAfterSeconds}s.`, {
      retryAfterSeconds: decision.retryAfterSeconds,
    });
  }
}

/** A refusal that comes after the rate decision, still carrying it for the response headers. */
export function withDecision<E extends CairnError>(err: E, decision: RateDecision): E & { decision: RateDecision } {
  return Object.assign(err, { decision });
}

export type QuotaMode = 'count' | 'check' | 'skip';

/** Finds the live page of a public slug (the PageService). */
export interface PageResolver {
  resolve(slug: string): Promise<{ tenant: TenantRow } | null>;
}

export class AccessService {
  constructor(
    private readonly deps: AccessDeps,
    private readonly pages: PageResolver,
    private readonly requests: RequestCounter,
  ) {}

  /**
   * `quota`: `count` counts the call against the monthly quota (refused at the limit); `check`
   * refuses at the limit without counting (publish); `skip` ignores the quota (unpublish, so a
   * tenant at its limit can still take a page down). The rate decision comes first, so a
   * suspended or over-quota tenant's refusal carries it too.
   */
  async admit(caller: Caller, opts: { quota: QuotaMode }): Promise<RateDecision> {
    const { tenant } = caller;
    const decision = await this.limitTenant(tenant);
    const month = monthKey(this.deps.clock.now());
    if (opts.quota !== 'skip') await this.requests.load(tenant.id, month);
    return this.afterRateDecision(tenant, decision, opts.quota, month);
  }

  /** Suspension, then the quota (its counter loaded); throws the refusal with `decision` attached. */
  private afterRateDecision(tenant: TenantRow, decision: RateDecision, quota: QuotaMode, month: string): RateDecision {
    // 401 `unauthorized` naming the suspension: how the hosted service's clients recognise it.
    if (tenant.suspended) {
      throw withDecision(new CairnError('unauthorized', 'This tenant is suspended; contact the operator.'), decision);
    }
    if (quota === 'skip') return decision;
    const plan = PLANS[tenant.plan];
    const limit = plan.requestsPerMonth;
    const withinQuota =
      quota === 'count'
        ? this.requests.tryCountNow(tenant.id, month, limit)
        : this.requests.countNow(tenant.id, month) < limit;
    if (!withinQuota) {
      const err = new CairnError(
        'quota_exceeded',
        `Monthly request quota of ${limit} reached on the ${tenant.plan} plan.`,
        { upgradeUrl: this.deps.upgradeUrl },
      );
      throw withDecision(err, decision);
    }
    return decision;
  }

  /** The tenant's sliding window (100/s sustained, 200 burst); 429 beyond it. */
  limitTenant(tenant: TenantRow): Promise<RateDecision> {
    return this.take(tenantKey(tenant), ruleOf(PLANS[tenant.plan]));
  }

  /** A request that names no tenant: the client IP's own window, which also slows key guessing. */
  limitAnonymous(ip: string): Promise<RateDecision> {
    return this.take(`ip:${ip}`, ruleOf(ANONYMOUS_RATE_LIMIT));
  }

  /** Public page endpoints share the page's tenant limit (spec) when the slug resolves; else the IP's. */
  async limitPublicPage(slug: string, ip: string): Promise<RateDecision> {
    const live = await this.pages.resolve(slug);
    return live ? this.limitTenant(live.tenant) : this.limitAnonymous(ip);
  }

  private async take(key: string, rule: RateRule): Promise<RateDecision> {
    return allowedOrThrow(await this.deps.limiter.take(key, rule, this.deps.clock.now()));
  }
}

const tenantKey = (tenant: TenantRow) => `tenant:${tenant.id}`;

/** The limiter's rule of a plan (or of anonymous callers). */
const ruleOf = (limits: { rateLimitSustained: number; rateLimitBurst: number }): RateRule => ({
  sustainedPerSecond: limits.rateLimitSustained,
  burst: limits.rateLimitBurst,
});

function allowedOrThrow(decision: RateDecision): RateDecision {
  if (!decision.allowed) throw new RateLimitedError(decision);
  return decision;
}
