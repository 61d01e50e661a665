import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CairnError } from '../../src/core/errors.js';
import { PLANS } from '../../src/core/plans.js';
import { monthKey } from '../../src/core/time.js';
import { ManualClock } from '../../src/ports/clock.js';
import { blobFilesFor, expectError, fetchBytes, put, sha256, uploadMultipart } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/** Plans, quotas and rate limits. The clock stands still unless a test moves it. */
let s: TestServer;
// Aligned on a 2-second rate window, so the window arithmetic below is exact.
const clock = new ManualClock(Date.UTC(2026, 8, 14, 12, 0, 0));

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

const tenantOf = (name: string) => s.core.tenants.byName(name);

describe('per-tenant rate limit', () => {
  it('a burst of 200 passes, the 201st is 429 with Retry-After; headers are exact; time heals it', async () => {
    clock.set(Date.UTC(2026, 8, 14, 12, 0, 0));
    const keyA = await s.createTenant('rate-a', 'free');
    const keyB = await s.createTenant('rate-b', 'free');
    const resetAt = String(Math.ceil((clock.now() + 2000) / 1000));
    for (let i = 1; i <= 200; i++) {
      const r = await api(s.apiUrl, keyA, 'GET', '/v1/whoami');
      expect(r.status, `request ${i}`).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('200');
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(200 - i));
      expect(r.headers.get('x-ratelimit-reset')).toBe(resetAt);
    }
    const limited = await api(s.apiUrl, keyA, 'GET', '/v1/artifacts');
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(4);
    expect(limited.json.error.retry_after_seconds).toBe(retryAfter);
    expect(limited.json.error.retry_after).toBe(retryAfter);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('200');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('x-ratelimit-reset')).toBe(resetAt);
    // Uploads are refused too, before any byte is stored.
    expectError(await uploadMultipart(s.apiUrl, keyA, { content: 'limited upload' }), 429, 'rate_limited');
    expect(await blobFilesFor(s, sha256('limited upload'))).toEqual([]);

    // Tenant A's burst does not touch tenant B.
    const b = await api(s.apiUrl, keyB, 'GET', '/v1/whoami');
    expect(b.status).toBe(200);
    expect(b.headers.get('x-ratelimit-remaining')).toBe('199');

    // Just before Retry-After is up, still refused; at Retry-After, admitted.
    clock.advance(retryAfter * 1000 - 1000);
    if (retryAfter > 1) expectError(await api(s.apiUrl, keyA, 'GET', '/v1/whoami'), 429, 'rate_limited');
    clock.advance(1000);
    const healed = await api(s.apiUrl, keyA, 'GET', '/v1/whoami');
    expect(healed.status).toBe(200);
    // Refused calls were not counted against the monthly quota: 200 whoami + this one.
    expect(healed.json.usage_requests_month).toBe(201);
    // Two idle windows later the full burst is back.
    clock.advance(4000);
    expect((await api(s.apiUrl, keyA, 'GET', '/v1/whoami')).headers.get('x-ratelimit-remaining')).toBe('199');
  });

  it('the sustained rate settles at 100 per second', async () => {
    clock.set(Date.UTC(2026, 8, 14, 13, 0, 0));
    const key = await s.createTenant('rate-sustained', 'pro');
    let passed = 0;
    // Ten seconds of 150 requests per second, in steps of 100 ms.
    for (let step = 0; step < 100; step++) {
      const results = await Promise.all(Array.from({ length: 15 }, () => api(s.apiUrl, key, 'GET', '/v1/sessions')));
      passed += results.filter((r) => r.status === 200).length;
      for (const r of results.filter((x) => x.status !== 200)) expectError(r, 429, 'rate_limited');
      clock.advance(100);
    }
    // 200 burst + ~100/s for the remaining time; the sliding window may round either way a little.
    expect(passed).toBeGreaterThanOrEqual(900);
    expect(passed).toBeLessThanOrEqual(1300);
  });
});

describe('monthly request quota', () => {
  it('at the plan limit further calls get 403 quota_exceeded with upgrade_url; next month resets', async () => {
    clock.set(Date.UTC(2026, 8, 30, 23, 0, 0));
    const key = await s.createTenant('quota-month', 'free');
    const tenant = await tenantOf('quota-month');
    const month = monthKey(clock.now());
    const limit = PLANS.free.requestsPerMonth;
    const published = await put(s.apiUrl, key, 'to publish');
    // Use up all but one request of the month directly in the store (10,000 HTTP calls would be
    // slow), as another instance would; the flush brings this instance's counter up to date.
    await s.core.deps.tenantStore.addRequests([{ tenantId: tenant.id, month, n: limit - 2 }]);
    await s.core.requests.flush();
    const last = await api(s.apiUrl, key, 'GET', '/v1/whoami');
    expect(last.status).toBe(200);
    expect(last.json.usage_requests_month).toBe(limit);
    const refused = await api(s.apiUrl, key, 'GET', '/v1/artifacts');
    expectError(refused, 403, 'quota_exceeded');
    expect(refused.json.error.upgrade_url).toMatch(/^https?:\/\//);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('200');
    expectError(await uploadMultipart(s.apiUrl, key, { content: 'over quota' }), 403, 'quota_exceeded');
    expect(await blobFilesFor(s, sha256('over quota'))).toEqual([]);
    await s.core.requests.flush();
    expect(await s.core.deps.tenantStore.getRequestCount(tenant.id, month)).toBe(limit);

    // Publishing is never counted, but the spec refuses it once the quota is reached; unpublish
    // still works so a tenant at its limit can take a page down (pages.test.ts covers both sides).
    const pub = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${published.artifact_id}/publish`, {
      visibility: 'unlisted',
    });
    expectError(pub, 403, 'quota_exceeded');
    await s.core.requests.flush();
    expect(await s.core.deps.tenantStore.getRequestCount(tenant.id, month)).toBe(limit);

    // A new month starts from zero.
    clock.set(Date.UTC(2026, 9, 1, 0, 0, 1));
    const next = await api(s.apiUrl, key, 'GET', '/v1/whoami');
    expect(next.status).toBe(200);
    expect(next.json.usage_requests_month).toBe(1);
  });
});

describe('API key cap', () => {
  it('free tenants may hold 10 active keys; revoking one makes room', async () => {
    clock.set(Date.UTC(2026, 10, 3, 0, 0, 0));
    await s.createTenant('keys-free', 'free');
    const tenant = await tenantOf('keys-free');
    const keys: string[] = [];
    for (let i = 0; i < 9; i++) keys.push(await s.core.tenants.createKey(tenant));
    let refused: unknown;
    try {
      await s.core.tenants.createKey(tenant);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(CairnError);
    expect((refused as CairnError).code).toBe('quota_exceeded');
    // Every key works, the refused one never existed.
    for (const k of keys) expect((await api(s.apiUrl, k, 'GET', '/v1/whoami')).json.api_key_last_4).toBe(k.slice(-4));
    await s.core.tenants.revokeKey(tenant, keys[0] as string);
    expectError(await api(s.apiUrl, keys[0] as string, 'GET', '/v1/whoami'), 401, 'unauthorized');
    const replacement = await s.core.tenants.createKey(tenant);
    expect((await api(s.apiUrl, replacement, 'GET', '/v1/whoami')).status).toBe(200);
    // Pro allows 50.
    await s.createTenant('keys-pro', 'pro');
    const pro = await tenantOf('keys-pro');
    for (let i = 0; i < 49; i++) await s.core.tenants.createKey(pro);
    await expect(s.core.tenants.createKey(pro)).rejects.toMatchObject({ code: 'quota_exceeded' });
  });
});

describe('a key in steady use', () => {
  it('is refused the moment it is revoked, while the tenant’s other key goes on sharing one window', async () => {
    // Several calls first: from the second on, admission finds the caller in its cache and the
    // counter loaded; the revocation must still win.
    clock.set(Date.UTC(2026, 10, 9, 12, 0, 0));
    const key = await s.createTenant('steady', 'pro');
    const second = await s.core.tenants.createKey(await tenantOf('steady'));
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      for (const k of [key, second]) {
        const r = await api(s.apiUrl, k, 'GET', '/v1/whoami');
        expect(r.status).toBe(200);
        remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
      }
    }
    // One tenant window for both keys, one slot per call, whichever path admitted it.
    expect(remaining).toEqual([199, 198, 197, 196, 195, 194]);
    await s.core.tenants.revokeKey(await tenantOf('steady'), key);
    expectError(await api(s.apiUrl, key, 'GET', '/v1/artifacts'), 401, 'unauthorized');
    const after = await api(s.apiUrl, second, 'GET', '/v1/whoami');
    expect(after.status).toBe(200);
    expect(after.json.usage_requests_month).toBe(7);
  });
});

describe('suspended tenant', () => {
  it('gets 401 unauthorized naming the suspension everywhere, and its links and signed URLs stop resolving', async () => {
    clock.set(Date.UTC(2026, 10, 5, 0, 0, 0));
    const key = await s.createTenant('suspended', 'pro');
    const other = await s.createTenant('not-suspended', 'pro');
    const a = await put(s.apiUrl, key, 'suspended bytes');
    const link = (await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {})).json;
    const signed = (await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`)).json.download_url;
    expect((await fetchBytes(link.url)).status).toBe(200);

    await s.core.tenants.setSuspended(await tenantOf('suspended'), true);
    for (const r of [
      await api(s.apiUrl, key, 'GET', '/v1/whoami'),
      await api(s.apiUrl, key, 'GET', '/v1/artifacts'),
      await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`),
      await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`),
      await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {}),
      await api(s.apiUrl, key, 'GET', '/v1/sessions'),
      await uploadMultipart(s.apiUrl, key, { content: 'while suspended' }),
    ]) {
      expectError(r, 401, 'unauthorized');
      expect(r.json.error.message).toMatch(/suspended/);
    }
    expect(await blobFilesFor(s, sha256('while suspended'))).toEqual([]);
    expect((await fetchBytes(link.url)).status).toBe(404);
    expect((await fetchBytes(signed)).status).toBe(404);
    // Others are unaffected.
    expect((await api(s.apiUrl, other, 'GET', '/v1/whoami')).status).toBe(200);

    await s.core.tenants.setSuspended(await tenantOf('suspended'), false);
    expect((await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`)).status).toBe(200);
    expect((await fetchBytes(link.url)).body.toString()).toBe('suspended bytes');
    expect((await fetchBytes(signed)).status).toBe(200);
  });
});
