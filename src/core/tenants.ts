import type { ApiKeyRow, TenantRow } from '../ports/metadata-store.js';
import type { WhoAmI } from '../wire/account.js';
import { CallerCache } from './caller-cache.js';
import type { CoreDeps } from './context.js';
import { CairnError, invalid } from './errors.js';
import { API_KEY, newApiKey, newKeyId, newTenantId } from './ids.js';
import { settleExpiry } from './lifecycle.js';
import { PLANS, type PlanName } from './plans.js';
import type { RequestCounter } from './request-counter.js';
import { storedHash } from './stored-hash.js';
import { monthKey, nextMonthStart, toIso } from './time.js';

/** What the store keeps of an API key (see storedHash). */
export const hashApiKey = (key: string) => storedHash(key);

const TENANT_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

export interface Caller {
  tenant: TenantRow;
  key: ApiKeyRow;
}

/** The ports and settings this service uses, of CoreDeps. */
export type TenantServiceDeps = Pick<
  CoreDeps,
  'tenantStore' | 'artifactStore' | 'sharingStore' | 'clock' | 'upgradeUrl'
>;

export class TenantService {
  private readonly callers = new CallerCache();

  constructor(
    private readonly deps: TenantServiceDeps,
    private readonly requests: RequestCounter,
  ) {}

  async create(name: string, plan: PlanName): Promise<{ tenant: TenantRow; apiKey: string }> {
    if (!TENANT_NAME.test(name)) throw invalid('Tenant names are 1-63 characters of a-z, 0-9, ".", "_" and "-".');
    const tenant = await this.deps.tenantStore.createTenant({
      id: newTenantId(),
      name,
      plan,
      suspended: false,
      createdAt: this.deps.clock.now(),
      storageBytes: 0,
    });
    const apiKey = await this.createKey(tenant);
    return { tenant, apiKey };
  }

  /** The first start of an empty data folder gets a tenant `default`; returns its key only then. */
  async ensureDefault(): Promise<string | null> {
    if ((await this.deps.tenantStore.listTenants()).length > 0) return null;
    try {
      return (await this.create('default', 'free')).apiKey;
    } catch (err) {
      // Another instance won the race to create it.
      if (err instanceof CairnError && err.code === 'invalid_request') return null;
      throw err;
    }
  }

  async byName(name: string): Promise<TenantRow> {
    const tenant = await this.deps.tenantStore.getTenantByName(name);
    if (!tenant) throw invalid(`No tenant named '${name}'.`);
    return tenant;
  }

  async createKey(tenant: TenantRow): Promise<string> {
    const apiKey = newApiKey();
    const ok = await this.deps.tenantStore.createApiKey(
      {
        id: newKeyId(),
        tenantId: tenant.id,
        hash: hashApiKey(apiKey),
        last4: apiKey.slice(-4),
        createdAt: this.deps.clock.now(),
        revokedAt: null,
      },
      PLANS[tenant.plan].apiKeys,
    );
    if (!ok) {
      throw new CairnError(
        'quota_exceeded',
        `The ${tenant.plan} plan allows ${PLANS[tenant.plan].apiKeys} active API keys; revoke one first.`,
        { upgradeUrl: this.deps.upgradeUrl },
      );
    }
    return apiKey;
  }

  async revokeKey(tenant: TenantRow, keyIdOrKey: string): Promise<void> {
    let keyId = keyIdOrKey;
    if (API_KEY.test(keyIdOrKey)) {
      const found = await this.deps.tenantStore.findApiKey(hashApiKey(keyIdOrKey));
      if (!found || found.tenant.id !== tenant.id) throw invalid('No such active key for this tenant.');
      keyId = found.key.id;
    }
    if (!(await this.deps.tenantStore.revokeApiKey(tenant.id, keyId, this.deps.clock.now()))) {
      throw invalid('No such active key for this tenant.');
    }
  }

  async setPlan(tenant: TenantRow, plan: PlanName): Promise<TenantRow> {
    return (await this.deps.tenantStore.updateTenant(tenant.id, { plan })) ?? tenant;
  }

  async setSuspended(tenant: TenantRow, suspended: boolean): Promise<TenantRow> {
    return (await this.deps.tenantStore.updateTenant(tenant.id, { suspended })) ?? tenant;
  }

  /** Resolves a bearer key to its caller; every failure is the same 401 so keys cannot be probed. */
  async authenticate(bearer: string | undefined): Promise<Caller> {
    const fail = (hint: string) => new CairnError('unauthorized', `Missing or invalid API key${hint}.`);
    if (!bearer) throw fail('; send Authorization: Bearer ak_live_…');
    if (!API_KEY.test(bearer)) throw fail(' (keys look like ak_live_ followed by 32 letters and digits)');
    const hash = hashApiKey(bearer);
    const { tenantStore, clock } = this.deps;
    // Read before the lookup: a change of credentials during it leaves the entry under the old epoch.
    const epoch = tenantStore.credentialsEpoch();
    const cached = this.callers.get(hash, epoch, clock.now());
    if (cached) return cached;
    const found = await tenantStore.findApiKey(hash);
    if (!found) throw fail(` (key ending …${bearer.slice(-4)} is unknown or revoked)`);
    this.callers.set(hash, found, epoch, clock.now());
    return found;
  }

  async whoami(caller: Caller): Promise<WhoAmI> {
    const { tenantStore, sharingStore, clock } = this.deps;
    await settleExpiry(this.deps, caller.tenant.id);
    const now = clock.now();
    const tenant = (await tenantStore.getTenant(caller.tenant.id)) ?? caller.tenant;
    const plan = PLANS[tenant.plan];
    const [requests, links] = await Promise.all([
      this.requests.count(tenant.id, monthKey(now)),
      sharingStore.countActiveLinks(tenant.id, now),
    ]);
    return {
      tenant_name: tenant.name,
      plan: tenant.plan,
      api_key_last_4: caller.key.last4,
      usage_storage_bytes: tenant.storageBytes,
      plan_storage_limit_bytes: plan.storageBytes,
      usage_requests_month: requests,
      plan_requests_limit_month: plan.requestsPerMonth,
      active_links: links,
      max_active_links: plan.activeLinks,
      rate_limit_sustained: plan.rateLimitSustained,
      rate_limit_burst: plan.rateLimitBurst,
      usage_storage_bytes_remaining: Math.max(0, plan.storageBytes - tenant.storageBytes),
      usage_requests_remaining_month: Math.max(0, plan.requestsPerMonth - requests),
      requests_month_resets_at: toIso(nextMonthStart(now)),
      rate_limit_unit: 'requests_per_second',
    };
  }
}
