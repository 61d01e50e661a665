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
import type { RateLimiter } from '../../src/ports/rate-limiter.js';

/**
 * AccessService.admitNow, the synchronous admission of the usual API call, against `admit`: the
 * same decisions and refusals, and nothing taken or counted when it cannot decide at once. Real
 * SQLite store, real request counter, the embedded limiter.
 */
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

describe('AccessService.admitNow', () => {
  it('declines, taking and counting nothing, until the tenant counter is loaded; then decides as admit does', async () => {
    const a = access();
    const c = await caller('ten_now');
    expect(a.admitNow(c, { quota: 'count' })).toBeUndefined();
    expect(requests.isLoaded(c.tenant.id, MONTH)).toBe(false);

    // The asynchronous path loads the counter; its decision is the first of the window.
    const first = await a.admit(c, { quota: 'count' });
    expect(first.remaining).toBe(PLANS.free.rateLimitBurst - 1);
    const second = a.admitNow(c, { quota: 'count' });
    expect(second).toMatchObject({ allowed: true, limit: 100, remaining: first.remaining - 1, resetAt: first.resetAt });
    const third = await a.admit(c, { quota: 'count' });
    expect(third.remaining).toBe(first.remaining - 2);
    expect(requests.countNow(c.tenant.id, MONTH)).toBe(3);
    // `skip` needs no counter and counts nothing; `check` reads it without counting.
    expect(a.admitNow(c, { quota: 'skip' })?.remaining).toBe(first.remaining - 3);
    expect(a.admitNow(c, { quota: 'check' })?.remaining).toBe(first.remaining - 4);
    expect(requests.countNow(c.tenant.id, MONTH)).toBe(3);
  });

  it('declines with a limiter that only decides asynchronously (Redis), leaving its window alone', async () => {
    const asyncOnly: RateLimiter = { take: (...args) => limiter.take(...args), close: () => limiter.close() };
    const a = access({ limiter: asyncOnly });
    const c = await caller('ten_async');
    await a.admit(c, { quota: 'count' });
    expect(a.admitNow(c, { quota: 'count' })).toBeUndefined();
    expect(a.admitNow(c, { quota: 'skip' })).toBeUndefined();
    expect((await a.admit(c, { quota: 'count' })).remaining).toBe(PLANS.free.rateLimitBurst - 2);
  });

  it('refuses as admit does: rate limit, suspension and quota, each with the rate decision attached', async () => {
    const a = access();
    const limited = await caller('ten_limited');
    await a.admit(limited, { quota: 'skip' });
    for (let i = 1; i < PLANS.free.rateLimitBurst; i++) a.admitNow(limited, { quota: 'skip' });
    expect(() => a.admitNow(limited, { quota: 'skip' })).toThrow(
      expect.objectContaining({ code: 'rate_limited', decision: expect.objectContaining({ allowed: false }) }),
    );

    const suspended = await caller('ten_suspended', true);
    await expect(a.admit(suspended, { quota: 'count' })).rejects.toMatchObject({
      code: 'unauthorized',
      message: expect.stringMatching(/suspended/),
    });
    expect(() => a.admitNow(suspended, { quota: 'count' })).toThrow(
      expect.objectContaining({ code: 'unauthorized', decision: expect.objectContaining({ allowed: true }) }),
    );

    const full = await caller('ten_full');
    await store.addRequests([{ tenantId: full.tenant.id, month: MONTH, n: PLANS.free.requestsPerMonth - 1 }]);
    await a.admit(full, { quota: 'count' });
    expect(() => a.admitNow(full, { quota: 'count' })).toThrow(
      expect.objectContaining({ code: 'quota_exceeded', decision: expect.objectContaining({ allowed: true }) }),
    );
    expect(() => a.admitNow(full, { quota: 'check' })).toThrow(expect.objectContaining({ code: 'quota_exceeded' }));
    expect(a.admitNow(full, { quota: 'skip' })?.allowed).toBe(true);
    await expect(a.admit(full, { quota: 'count' })).rejects.toMatchObject({ code: 'quota_exceeded' });
  });
});
