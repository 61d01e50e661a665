import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError, put } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * X-RateLimit-* on every API response: the tenant's window for authenticated calls and for public
 * page calls whose slug resolves, the client IP's window for everything else. The clock stands
 * still inside a test, so every value is exact; each test starts at a time of its own.
 */
let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 3, 1, 0, 0, 0));
const NO_PAGE = 'pg_0000000000000000';

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

type Headed = { status: number; headers: Headers; text: string };

/** The three headers, after checking they describe one window: Remaining never above Limit. */
function rateHeaders(r: Headed) {
  const h = {
    limit: r.headers.get('x-ratelimit-limit'),
    remaining: r.headers.get('x-ratelimit-remaining'),
    reset: r.headers.get('x-ratelimit-reset'),
  };
  expect(Number(h.remaining), JSON.stringify(h)).toBeLessThanOrEqual(Number(h.limit));
  return h;
}

/** The Reset of a window whose oldest request is now, `windowMs` long. */
const resetIn = (windowMs: number) => String(Math.ceil((clock.now() + windowMs) / 1000));

/** A GET from another loopback address: another client IP, as far as the server can tell. */
function getFrom(localAddress: string, url: string): Promise<{ status: number; remaining: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { localAddress, agent: false }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, remaining: res.headers['x-ratelimit-remaining'] as string }),
        );
      })
      .on('error', reject);
  });
}

describe('requests that name no tenant', () => {
  it('401, 404, /health, the OpenAPI document and unresolved public pages all draw on the client IP’s window', async () => {
    clock.set(Date.UTC(2026, 3, 1, 1, 0, 0));
    const reset = resetIn(2000);
    // One after the other: each must see the window the previous one left.
    const calls: [() => Promise<Headed>, number][] = [
      [() => api(s.apiUrl, null, 'GET', '/health'), 200],
      [() => api(s.apiUrl, null, 'GET', '/v1/openapi.json'), 200],
      [() => api(s.apiUrl, null, 'GET', '/no/such/route'), 404],
      [() => api(s.apiUrl, null, 'GET', '/v1/whoami'), 401],
      [() => api(s.apiUrl, `ak_live_${'0'.repeat(32)}`, 'GET', '/v1/artifacts'), 401],
      [() => api(s.apiUrl, 'not-a-key', 'POST', '/v1/artifacts', {}), 401],
      [() => api(s.apiUrl, null, 'GET', `/v1/public/pages/${NO_PAGE}/gate-info`), 404],
      [() => api(s.apiUrl, null, 'POST', `/v1/public/pages/${NO_PAGE}/unlock`, { password: 'x' }), 404],
      [() => api(s.apiUrl, null, 'POST', `/v1/public/pages/${NO_PAGE}/report`, {}), 202],
    ];
    let remaining = 200;
    for (const [call, status] of calls) {
      const r = await call();
      expect(r.status, r.text).toBe(status);
      expect(rateHeaders(r)).toEqual({ limit: '200', remaining: String(--remaining), reset });
    }
  });

  it('the 201st request from one IP in the window is 429 with Retry-After; another IP and a tenant’s key pass', async () => {
    clock.set(Date.UTC(2026, 3, 1, 2, 0, 0));
    const key = await s.createTenant('anon-burst', 'free');
    for (let i = 1; i <= 200; i++) {
      const r = await api(s.apiUrl, null, 'GET', '/health');
      expect(r.status, `request ${i}`).toBe(200);
      expect(r.headers.get('x-ratelimit-remaining')).toBe(String(200 - i));
    }
    const limited = await api(s.apiUrl, null, 'GET', '/health');
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).toBe('2');
    expect(limited.json.error.retry_after_seconds).toBe(2);
    expect(limited.json.error.retry_after).toBe(2);
    expect(rateHeaders(limited)).toEqual({ limit: '200', remaining: '0', reset: resetIn(2000) });
    // Guessing keys from this IP is slowed down too: 429, not 401.
    expectError(await api(s.apiUrl, `ak_live_${'1'.repeat(32)}`, 'GET', '/v1/whoami'), 429, 'rate_limited');

    // A tenant's calls from the same IP use the tenant's window.
    const tenantCall = await api(s.apiUrl, key, 'GET', '/v1/whoami');
    expect(tenantCall.status).toBe(200);
    expect(tenantCall.headers.get('x-ratelimit-remaining')).toBe('199');
    // Another client IP has a window of its own.
    expect(await getFrom('127.0.0.2', `${s.apiUrl}/health`)).toEqual({ status: 200, remaining: '199' });

    clock.advance(2000);
    expect((await api(s.apiUrl, null, 'GET', '/health')).headers.get('x-ratelimit-remaining')).toBe('199');
  });
});

describe('a tenant’s window', () => {
  it('covers its suspended 401 and the public endpoints of its pages (200, 202, 404, 401, then 429)', async () => {
    clock.set(Date.UTC(2026, 3, 1, 3, 0, 0));
    const reset = resetIn(2000);
    const key = await s.createTenant('pages-window', 'pro');
    const publish = async (text: string, body: Record<string, unknown>) => {
      const a = await put(s.apiUrl, key, text, { filename: 'page.md' });
      const r = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/publish`, body);
      expect(r.status, r.text).toBe(200);
      return r.json.page_id as string;
    };
    const gated = await publish('gated', { visibility: 'unlisted', access: 'password', password: 'sesame' });
    const open = await publish('open', { visibility: 'unlisted' });
    // Four calls so far (two uploads, two publishes), all in this window.
    let remaining = 196;
    const expectTenant = (r: Headed, status: number) => {
      expect(r.status, r.text).toBe(status);
      expect(rateHeaders(r)).toEqual({ limit: '200', remaining: String(--remaining), reset });
    };
    const pub = (path: string, body?: unknown) =>
      api(s.apiUrl, null, body === undefined ? 'GET' : 'POST', `/v1/public/pages/${path}`, body);
    expectTenant(await pub(`${gated}/gate-info`), 200);
    expectTenant(await pub(`${open}/gate-info`), 404);
    expectTenant(await pub(`${gated}/unlock`, { password: 'wrong' }), 401);
    expectTenant(await pub(`${gated}/unlock`, { password: 'sesame' }), 200);
    expectTenant(await pub(`${open}/unlock`, { password: 'sesame' }), 404);
    expectTenant(await pub(`${gated}/report`, { reason: 'spam' }), 202);
    expectTenant(await pub(`${open}/report`, {}), 202);

    const tenant = await s.core.tenants.byName('pages-window');
    await s.core.tenants.setSuspended(tenant, true);
    const suspended = await api(s.apiUrl, key, 'GET', '/v1/whoami');
    expectError(suspended, 401, 'unauthorized');
    expectTenant(suspended, 401);
    // A suspended tenant's pages do not resolve: the caller's IP window answers for them.
    const unresolved = await pub(`${gated}/gate-info`);
    expect(unresolved.status).toBe(404);
    expect(rateHeaders(unresolved)).toEqual({ limit: '200', remaining: '199', reset });
    await s.core.tenants.setSuspended(tenant, false);

    // The tenant's own calls use up the window; its pages' public calls are refused with it.
    while (remaining > 0) expectTenant(await api(s.apiUrl, key, 'GET', '/v1/sessions'), 200);
    for (const r of [await pub(`${gated}/gate-info`), await pub(`${gated}/report`, {})]) {
      expectError(r, 429, 'rate_limited');
      expect(rateHeaders(r)).toEqual({ limit: '200', remaining: '0', reset });
      expect(r.headers.get('retry-after')).toBe('2');
    }
  });
});

describe('the public caps', () => {
  it('refuse with the headers of the cap that refused: unlock 10 a minute, reports 5 an hour', async () => {
    clock.set(Date.UTC(2026, 3, 1, 4, 0, 0));
    const key = await s.createTenant('caps-window', 'pro');
    const a = await put(s.apiUrl, key, 'capped', { filename: 'capped.md' });
    const slug = (
      await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/publish`, {
        visibility: 'unlisted',
        access: 'password',
        password: 'right',
      })
    ).json.page_id;
    const unlock = () => api(s.apiUrl, null, 'POST', `/v1/public/pages/${slug}/unlock`, { password: 'guess' });
    for (let i = 0; i < 10; i++) expect((await unlock()).status).toBe(401);
    const capped = await unlock();
    expectError(capped, 429, 'rate_limited');
    expect(rateHeaders(capped)).toEqual({ limit: '10', remaining: '0', reset: resetIn(60_000) });
    expect(capped.headers.get('retry-after')).toBe('60');
    expect(capped.json.error.retry_after_seconds).toBe(60);

    const report = () => api(s.apiUrl, null, 'POST', `/v1/public/pages/${slug}/report`, {});
    for (let i = 0; i < 5; i++) expect((await report()).status).toBe(202);
    const reported = await report();
    expectError(reported, 429, 'rate_limited');
    expect(rateHeaders(reported)).toEqual({ limit: '5', remaining: '0', reset: resetIn(3_600_000) });
    expect(reported.headers.get('retry-after')).toBe('3600');
  });
});
