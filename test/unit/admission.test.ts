import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../src/adapters/memory-limiter/memory-rate-limiter.js';
import { SqliteMetadataStore } from '../../src/adapters/sqlite/index.js';
import { AccessService, type PageResolver } from '../../src/core/access.js';
import type { CoreDeps } from '../../src/core/context.js';
import { PLANS } from '../../src/core/plans.js';
import { RequestCounter } from '../../src/core/request-counter.js';
import type { Caller } from '../../src/core/tenants.js';
import { monthKey } from '../../src/core/time.js';
import { ManualClock } from '../../src/ports/clock.js';

/** AccessService.admit over a real SQLite store, the real request counter and the embedded limiter. */
let dir: string;
let store: SqliteMetadataStore;
let limiter: MemoryRateLimiter;
let requests: RequestCounter;
const clock = new ManualClock(Date.UTC(2026, 8, 14, 12, 0, 0));
const MONTH = monthKey(clock.now());
const noPages: PageResolver = { resolve: async () => null };

function access(over: Partial<CoreDeps> = {}): AccessService {
  const deps = { limiter, clock, upgradeUrl: 'https://cairn.test/pricing', ...over } as unknown as CoreDeps;
  return new AccessService(deps, noPages, requests);
}

async function caller(id: string, suspended = false): Promise<Caller> {
  const tenant = { id, name: id, plan: 'free' as const, suspended, createdAt: 0, storageBytes: 0 };
  await store.createTenant(tenant);
  return { tenant, key: { id: `key_${id}`, tenantId: id, hash: 'h', last4: 'abcd', createdAt: 0, revokedAt: null } };
}

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cairn-admission-'));
  store = new SqliteMetadataStore({ path: path.join(dir, 'a.sqlite') });
  await store.migrate();
  limiter = new MemoryRateLimiter();
  requests = new RequestCounter(store);
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('AccessService.admit', () => {
  it('takes one slot of the window per call, and counts the quota only when asked to', async () => {
    const a = access();
    const c = await caller('ten_now');
    const first = await a.admit(c, { quota: 'count' });
    expect(first.remaining).toBe(PLANS.free.rateLimitBurst - 1);
    const second = await a.admit(c, { quota: 'count' });
    expect(second).toMatchObject({ allowed: true, limit: 200, remaining: first.remaining - 1, resetAt: first.resetAt });
    expect(requests.countNow(c.tenant.id, MONTH)).toBe(2);
    // `skip` ignores the quota and counts nothing; `check` reads it without counting.
    expect((await a.admit(c, { quota: 'skip' })).remaining).toBe(first.remaining - 2);
    expect((await a.admit(c, { quota: 'check' })).remaining).toBe(first.remaining - 3);
    expect(requests.countNow(c.tenant.id, MONTH)).toBe(2);
  });

  it('refuses past the rate limit, a suspended tenant and a full quota, each with the rate decision attached', async () => {
    const a = access();
    const limited = await caller('ten_limited');
    for (let i = 0; i < PLANS.free.rateLimitBurst; i++) await a.admit(limited, { quota: 'skip' });
    await expect(a.admit(limited, { quota: 'skip' })).rejects.toMatchObject({
      code: 'rate_limited',
      decision: expect.objectContaining({ allowed: false }),
    });

    const suspended = await caller('ten_suspended', true);
    await expect(a.admit(suspended, { quota: 'count' })).rejects.toMatchObject({
      code: 'unauthorized',
      message: expect.stringMatching(/suspended/),
      decision: expect.objectContaining({ allowed: true }),
    });

    const full = await caller('ten_full');
    await store.addRequests([{ tenantId: full.tenant.id, month: MONTH, n: PLANS.free.requestsPerMonth - 1 }]);
    await a.admit(full, { quota: 'count' });
    await expect(a.admit(full, { quota: 'count' })).rejects.toMatchObject({
      code: 'quota_exceeded',
      decision: expect.objectContaining({ allowed: true }),
    });
    await expect(a.admit(full, { quota: 'check' })).rejects.toMatchObject({ code: 'quota_exceeded' });
    expect((await a.admit(full, { quota: 'skip' })).allowed).toBe(true);
  });
});
