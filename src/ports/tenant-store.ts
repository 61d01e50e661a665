import type { PlanName } from '../shared/plan-name.js';
import type { ApiKeyRow, TenantRow } from './metadata-records.js';

/**
 * Tenants, their API keys and their monthly request counters: who is calling, on which plan, and
 * how much they have used.
 *
 * The rules every metadata port shares (each method atomic, timestamps in epoch milliseconds,
 * conflicts thrown as `CairnError`) are in metadata-store.ts.
 */

/** Requests to add to one monthly counter (see `addRequests`). */
export interface RequestDelta {
  tenantId: string;
  month: string;
  n: number;
}

export interface TenantStore {
  // --- tenants and keys ---
  /** Throws `CairnError('invalid_request')` when the name is taken. */
  createTenant(tenant: TenantRow): Promise<TenantRow>;
  getTenant(id: string): Promise<TenantRow | null>;
  getTenantByName(name: string): Promise<TenantRow | null>;
  listTenants(): Promise<TenantRow[]>;
  /** Returns the updated tenant, or null when unknown. */
  updateTenant(id: string, change: { plan?: PlanName; suspended?: boolean }): Promise<TenantRow | null>;
  /** Inserts the key unless the tenant already has `maxActive` unrevoked keys; says which happened. */
  createApiKey(key: ApiKeyRow, maxActive: number): Promise<boolean>;
  /** An unrevoked key with this hash and its tenant. */
  findApiKey(hash: string): Promise<{ key: ApiKeyRow; tenant: TenantRow } | null>;
  /** All keys of the tenant, revoked ones included, oldest first. */
  listApiKeys(tenantId: string): Promise<ApiKeyRow[]>;
  /** Revokes the tenant's key `keyId`; false when there is no such unrevoked key. */
  revokeApiKey(tenantId: string, keyId: string, now: number): Promise<boolean>;
  /**
   * A number that changes whenever what `findApiKey` answers may have changed: a key revoked, a
   * tenant's plan or suspension changed, by this store or by any other process on the same
   * database. Answered without a query (it is asked on every request, to decide whether a cached
   * key lookup still holds). `null` while the store cannot tell (nothing may be cached then).
   * A new key needs no change: only found keys are cached.
   */
  credentialsEpoch(): number | null;

  // --- usage ---
  /**
   * Adds `n` (0 or more) to each (tenant, month `YYYY-MM`) request counter, atomically per counter
   * (concurrent callers never lose an increment), and returns each counter's total after the
   * addition, in order. `n: 0` just reads a total. Instances batch their counts through this.
   */
  addRequests(counts: readonly RequestDelta[]): Promise<number[]>;
  getRequestCount(tenantId: string, month: string): Promise<number>;
}
