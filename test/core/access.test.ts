import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/core/tenants.js';
import { monthKey } from '../../src/core/time.js';
import { type CoreHarness, coreHarness, DAY_MS, START } from './harness.js';

/**
 * Tenants and admission in the core (spec: Tenant, Authentication; API.md; docs/api.md: Plans and
 * limits, Rate limits, whoami): API keys per plan and their revocation, suspension, plan changes,
 * the whoami figures, the per-tenant rate limit and the monthly request counter (publish is
 * checked but not counted; unpublish is neither). Which route uses which quota mode is the HTTP
 * edge's (src/http/api/routes/pages.ts), tested on the wire in test/e2e.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

/** Sets the tenant's stored request count for this month (as other instances' flushes would). */
async function countedAlready(t: Caller, n: number) {
  await h.core.deps.tenantStore.addRequests([{ tenantId: t.tenant.id, month: monthKey(h.clock.now()), n }]);
}

describe('API keys', () => {
  it('authenticate to their own tenant; the key’s last 4 are kept', async () => {
    const t = await h.tenant('acme');
    const caller = await h.core.tenants.authenticate(t.apiKey);
    expect(caller.tenant).toMatchObject({ id: t.tenant.id, name: 'acme' });
    expect(caller.key.last4).toBe(t.apiKey.slice(-4));
    expect(t.apiKey).toMatch(/^ak_live_[A-Za-z0-9]{32}$/);
  });

  it('a missing, malformed or unknown key is unauthorized (401), naming the last 4 of an unknown one', async () => {
    await expect(h.core.tenants.authenticate(undefined)).rejects.toMatchObject({ code: 'unauthorized', status: 401 });
    await expect(h.core.tenants.authenticate('ak_live_short')).rejects.toMatchObject({ code: 'unauthorized' });
    const unknown = `ak_live_${'A'.repeat(28)}WXYZ`;
    await expect(h.core.tenants.authenticate(unknown)).rejects.toMatchObject({
      code: 'unauthorized',
      message: expect.stringContaining('WXYZ'),
    });
  });

  it('are at most 10 active on Free and 50 on Pro: the next is quota_exceeded', async () => {
    const free = await h.tenant('free', 'free');
    const pro = await h.tenant('pro', 'pro');
    for (let i = 1; i < 10; i++) await h.core.tenants.createKey(free.tenant);
    await expect(h.core.tenants.createKey(free.tenant)).rejects.toMatchObject({ code: 'quota_exceeded', status: 403 });
    for (let i = 1; i < 50; i++) await h.core.tenants.createKey(pro.tenant);
    await expect(h.core.tenants.createKey(pro.tenant)).rejects.toMatchObject({ code: 'quota_exceeded' });
  });

  it('a revoked key is refused at once (also after it authenticated before), and frees its place', async () => {
    const t = await h.tenant('free', 'free');
    for (let i = 1; i < 10; i++) await h.core.tenants.createKey(t.tenant);
    await h.core.tenants.authenticate(t.apiKey);
    await h.core.tenants.revokeKey(t.tenant, t.apiKey);
    await expect(h.core.tenants.authenticate(t.apiKey)).rejects.toMatchObject({ code: 'unauthorized' });
    const fresh = await h.core.tenants.createKey(t.tenant);
    await expect(h.core.tenants.authenticate(fresh)).resolves.toMatchObject({ tenant: { id: t.tenant.id } });
  });

  it('cannot be revoked through another tenant', async () => {
    const a = await h.tenant('a');
    const b = await h.tenant('b');
    await expect(h.core.tenants.revokeKey(b.tenant, a.apiKey)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(h.core.tenants.authenticate(a.apiKey)).resolves.toMatchObject({ tenant: { id: a.tenant.id } });
  });
});

describe('suspension', () => {
  it('refuses every authenticated call with 401 unauthorized saying the tenant is suspended', async () => {
    const t = await h.tenant('acme');
    await h.core.tenants.setSuspended(t.tenant, true);
    const caller = await h.core.tenants.authenticate(t.apiKey);
    for (const quota of ['count', 'check', 'skip'] as const) {
      await expect(h.core.access.admit(caller, { quota })).rejects.toMatchObject({
        code: 'unauthorized',
        status: 401,
        message: expect.stringContaining('suspended'),
        decision: { allowed: true },
      });
    }
  });

  it('is lifted by unsuspending: calls are admitted again', async () => {
    const t = await h.tenant('acme');
    await h.core.tenants.setSuspended(t.tenant, true);
    await h.core.tenants.setSuspended(t.tenant, false);
    const caller = await h.core.tenants.authenticate(t.apiKey);
    await expect(h.core.access.admit(caller, { quota: 'count' })).resolves.toMatchObject({ allowed: true });
  });
});

describe('plan change', () => {
  it('takes effect for the next call: Pro → Free loses presigned uploads, password pages and the long TTL', async () => {
    const t = await h.tenant('acme', 'pro');
    const id = (await h.upload(t, '# x', { filename: 'x.md' })).artifact_id;
    await h.core.tenants.setPlan(t.tenant, 'free');
    const now = await h.core.tenants.authenticate(t.apiKey);
    expect(now.tenant.plan).toBe('free');
    await expect(h.core.presigned.requestUrl(now, { filename: 'a', sizeBytes: 5 })).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
    await expect(
      h.core.pages.publish(now, id, { visibility: 'unlisted', access: 'password', password: 'pw' }),
    ).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(h.upload(now, 'x', { ttl: '100d' })).rejects.toMatchObject({ code: 'ttl_exceeds_plan_limit' });
    expect((await h.core.tenants.whoami(now)).plan_storage_limit_bytes).toBe(1_000_000_000);
  });

  it('Free → Pro lifts them', async () => {
    const t = await h.tenant('acme', 'free');
    await h.core.tenants.setPlan(t.tenant, 'pro');
    const now = await h.core.tenants.authenticate(t.apiKey);
    await expect(h.core.presigned.requestUrl(now, { filename: 'a', sizeBytes: 5 })).resolves.toMatchObject({
      status: 'pending',
    });
    await expect(h.upload(now, 'x', { ttl: '365d' })).resolves.toMatchObject({
      expires_at: new Date(START + 365 * DAY_MS).toISOString(),
    });
  });
});

describe('whoami', () => {
  it('reports the spec’s eleven fields and the four derived ones, live', async () => {
    const t = await h.tenant('acme', 'free');
    await h.upload(t, 'x'.repeat(100));
    await h.upload(t, 'x'.repeat(100));
    const rec = await h.upload(t, 'y'.repeat(20));
    await h.core.sharing.createLink(t, rec.artifact_id);
    await h.core.sharing.createLink(t, rec.artifact_id);
    await h.core.access.admit(t, { quota: 'count' });
    await h.core.access.admit(t, { quota: 'count' });
    expect(await h.core.tenants.whoami(t)).toEqual({
      tenant_name: 'acme',
      plan: 'free',
      api_key_last_4: t.apiKey.slice(-4),
      usage_storage_bytes: 120,
      plan_storage_limit_bytes: 1_000_000_000,
      usage_requests_month: 2,
      plan_requests_limit_month: 10_000,
      active_links: 2,
      max_active_links: 100,
      rate_limit_sustained: 100,
      rate_limit_burst: 200,
      usage_storage_bytes_remaining: 1_000_000_000 - 120,
      usage_requests_remaining_month: 9_998,
      requests_month_resets_at: '2026-12-01T00:00:00.000Z',
      rate_limit_unit: 'requests_per_second',
    });
  });

  it('of Pro shows the Pro limits', async () => {
    const t = await h.tenant('acme', 'pro');
    expect(await h.core.tenants.whoami(t)).toMatchObject({
      plan: 'pro',
      plan_storage_limit_bytes: 50_000_000_000,
      plan_requests_limit_month: 100_000,
      max_active_links: 1_000,
    });
  });

  it('counts neither the storage nor the links of an expired artifact, before any sweeper runs', async () => {
    const t = await h.tenant('acme');
    const rec = await h.upload(t, 'x'.repeat(30), { ttl: '1h' });
    await h.core.sharing.createLink(t, rec.artifact_id);
    h.clock.advance(3_600_000);
    expect(await h.core.tenants.whoami(t)).toMatchObject({ usage_storage_bytes: 0, active_links: 0 });
  });

  it('never shows fewer than 0 requests remaining', async () => {
    const t = await h.tenant('acme', 'free');
    await countedAlready(t, 10_000 + 5);
    expect(await h.core.tenants.whoami(t)).toMatchObject({ usage_requests_remaining_month: 0 });
  });
});

describe('the per-tenant rate limit', () => {
  it('admits a burst of 200 at once; the 201st is rate_limited with retry_after_seconds', async () => {
    const t = await h.tenant('acme');
    for (let i = 0; i < 200; i++) await h.core.access.admit(t, { quota: 'count' });
    await expect(h.core.access.admit(t, { quota: 'count' })).rejects.toMatchObject({
      code: 'rate_limited',
      status: 429,
      extras: { retryAfterSeconds: 2 },
      decision: { allowed: false, limit: 200, remaining: 0 },
    });
  });

  it('refills at 100 per second over its 2 s window, and is per tenant (any of its keys)', async () => {
    const t = await h.tenant('acme');
    const other = await h.tenant('other');
    const secondKey = await h.core.tenants.authenticate(await h.core.tenants.createKey(t.tenant));
    for (let i = 0; i < 100; i++) await h.core.access.admit(t, { quota: 'count' });
    h.clock.advance(1000);
    for (let i = 0; i < 100; i++) await h.core.access.admit(secondKey, { quota: 'count' });
    await expect(h.core.access.admit(t, { quota: 'count' })).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(h.core.access.admit(other, { quota: 'count' })).resolves.toMatchObject({ allowed: true });
    // The first 100 leave the window 2 s after they came.
    h.clock.advance(1000);
    for (let i = 0; i < 100; i++) await h.core.access.admit(t, { quota: 'count' });
    await expect(h.core.access.admit(t, { quota: 'count' })).rejects.toMatchObject({ code: 'rate_limited' });
  });

  it('reports the window on every admission: limit 200, what remains, when it resets', async () => {
    const t = await h.tenant('acme');
    for (let i = 0; i < 3; i++) await h.core.access.admit(t, { quota: 'count' });
    expect(await h.core.access.admit(t, { quota: 'count' })).toEqual({
      allowed: true,
      limit: 200,
      remaining: 196,
      resetAt: START / 1000 + 2,
      retryAfterSeconds: 0,
    });
  });

  it('applies to public page calls as the page’s tenant’s, and as the client IP’s for a slug that is no page', async () => {
    const t = await h.tenant('acme');
    const id = (await h.upload(t, '# x', { filename: 'x.md' })).artifact_id;
    const { page_id } = await h.core.pages.publish(t, id, { visibility: 'unlisted' });
    for (let i = 0; i < 200; i++) await h.core.access.admit(t, { quota: 'count' });
    await expect(h.core.access.limitPublicPage(page_id, '203.0.113.7')).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(h.core.access.limitPublicPage('pg_0000000000000000', '203.0.113.7')).resolves.toMatchObject({
      allowed: true,
      remaining: 199,
    });
  });
});

describe('the monthly request counter', () => {
  it('counts each admitted call; at the plan’s limit the next is quota_exceeded with upgrade_url', async () => {
    const t = await h.tenant('acme', 'free');
    await countedAlready(t, 10_000 - 2);
    await h.core.access.admit(t, { quota: 'count' });
    await h.core.access.admit(t, { quota: 'count' });
    await expect(h.core.access.admit(t, { quota: 'count' })).rejects.toMatchObject({
      code: 'quota_exceeded',
      status: 403,
      extras: { upgradeUrl: expect.any(String) },
      decision: { allowed: true },
    });
    expect((await h.core.tenants.whoami(t)).usage_requests_month).toBe(10_000);
  });

  it('does not count publish (checked: refused at the limit) nor unpublish (always admitted)', async () => {
    const t = await h.tenant('acme', 'free');
    await countedAlready(t, 10_000 - 1);
    await h.core.access.admit(t, { quota: 'check' });
    await h.core.access.admit(t, { quota: 'skip' });
    expect((await h.core.tenants.whoami(t)).usage_requests_month).toBe(10_000 - 1);
    await h.core.access.admit(t, { quota: 'count' });
    await expect(h.core.access.admit(t, { quota: 'check' })).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(h.core.access.admit(t, { quota: 'skip' })).resolves.toMatchObject({ allowed: true });
  });

  it('starts again at the next UTC month', async () => {
    const t = await h.tenant('acme', 'free');
    await countedAlready(t, 10_000);
    await expect(h.core.access.admit(t, { quota: 'count' })).rejects.toMatchObject({ code: 'quota_exceeded' });
    h.clock.set(Date.UTC(2026, 11, 1));
    await expect(h.core.access.admit(t, { quota: 'count' })).resolves.toMatchObject({ allowed: true });
    expect(await h.core.tenants.whoami(t)).toMatchObject({
      usage_requests_month: 1,
      requests_month_resets_at: '2027-01-01T00:00:00.000Z',
    });
  });

  it('is per tenant and Pro’s limit is 100,000', async () => {
    const free = await h.tenant('free', 'free');
    const pro = await h.tenant('pro', 'pro');
    await countedAlready(free, 10_000);
    await countedAlready(pro, 10_000);
    await expect(h.core.access.admit(free, { quota: 'count' })).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(h.core.access.admit(pro, { quota: 'count' })).resolves.toMatchObject({ allowed: true });
    await countedAlready(pro, 100_000);
    await h.core.requests.flush();
    await expect(h.core.access.admit(pro, { quota: 'count' })).rejects.toMatchObject({ code: 'quota_exceeded' });
  });
});

describe('upload slots', () => {
  it('a tenant holds at most its limit of large uploads at once (16 by default); others are not affected', () => {
    const t = 'ten_a';
    const slots = h.core.uploadSlots;
    expect(slots.perTenant).toBe(16);
    const held = Array.from({ length: 16 }, () => slots.take(t));
    expect(() => slots.take(t)).toThrow(expect.objectContaining({ code: 'rate_limited' }));
    expect(() => slots.take('ten_b')()).not.toThrow();
    held[0]?.();
    expect(() => slots.take(t)).not.toThrow();
  });
});
