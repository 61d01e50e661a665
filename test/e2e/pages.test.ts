import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError, put, type Rec } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The spec's Page table, publish/unpublish rules, gate-info and unlock, over HTTP. Reports:
 * page-reports.test.ts; the viewer and content origins: page-origins.test.ts.
 */

const SLUG = /^pg_[A-Za-z0-9]{16}$/;
const clock = new ManualClock(Date.UTC(2026, 10, 23, 8));
let s: TestServer;
let freeKey: string;
let otherKey: string;

beforeAll(async () => {
  s = await startTestServer({ clock });
  freeKey = await s.createTenant('free-co', 'free');
  otherKey = await s.createTenant('other-co', 'pro');
});

afterAll(async () => {
  await s?.close();
});

// Public endpoints count attempts per minute and per hour; each test starts in a fresh window.
beforeEach(() => clock.advance(2 * 3_600_000));

const publish = (id: string, body: unknown, key = s.apiKey) =>
  api(s.apiUrl, key, 'POST', `/v1/artifacts/${id}/publish`, body);
const unpublish = (id: string, key = s.apiKey) => api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${id}/publish`);
const gateInfo = (slug: string) => api(s.apiUrl, null, 'GET', `/v1/public/pages/${slug}/gate-info`);
const unlock = (slug: string, body: unknown) => api(s.apiUrl, null, 'POST', `/v1/public/pages/${slug}/unlock`, body);
const getArtifact = (id: string, key = s.apiKey) => api(s.apiUrl, key, 'GET', `/v1/artifacts/${id}`);
/** Whether the content origin's check would accept `token` for the page `slug` as it is stored now. */
const accepts = async (slug: string, token: string) => {
  const found = await s.core.deps.sharingStore.getPageBySlug(slug);
  return found !== null && s.core.pages.acceptsContentToken(found.page, token);
};

async function passwordPage(password = 'correct horse'): Promise<{ art: Rec; slug: string }> {
  const art = await put(s.apiUrl, s.apiKey, `secret ${Math.random()}`, { filename: 'notes.md' });
  const r = await publish(art.artifact_id, { visibility: 'unlisted', access: 'password', password });
  expect(r.status, r.text).toBe(200);
  return { art, slug: r.json.page_id };
}

describe('publish', () => {
  it('creates a live page: slug, public URL on the viewer origin, echoes; page on GET, null in lists', async () => {
    const art = await put(s.apiUrl, s.apiKey, '# Hello', { filename: 'hello.md' });
    const r = await publish(art.artifact_id, { visibility: 'unlisted', title: 'Hello' });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['access', 'page_id', 'public_url', 'visibility']);
    expect(r.json.page_id).toMatch(SLUG);
    expect(r.json.public_url).toBe(`${s.viewerUrl}/a/${r.json.page_id}`);
    expect(r.json).toMatchObject({ visibility: 'unlisted', access: 'none' });
    const got = await getArtifact(art.artifact_id);
    expect(got.json.page).toEqual({ public_url: r.json.public_url, visibility: 'unlisted' });
    const list = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?limit=200');
    const row = list.json.artifacts.find((a: Rec) => a.artifact_id === art.artifact_id);
    expect(row.page).toBeNull();
  });

  it('is an upsert: re-publish keeps the slug and updates title, visibility and access', async () => {
    const art = await put(s.apiUrl, s.apiKey, 'v');
    const first = await publish(art.artifact_id, { visibility: 'unlisted', title: 'One' });
    const again = await publish(art.artifact_id, { visibility: 'public', title: 'Two' });
    expect(again.status).toBe(200);
    expect(again.json.page_id).toBe(first.json.page_id);
    expect(again.json.visibility).toBe('public');
    const row = await s.core.deps.sharingStore.getPageBySlug(first.json.page_id);
    expect(row?.page).toMatchObject({ title: 'Two', visibility: 'public', access: 'none', live: true });
    expect((await getArtifact(art.artifact_id)).json.page.visibility).toBe('public');
  });

  it('unpublish by art_ or pg_, idempotent, and re-publish brings back the same slug and URL', async () => {
    const art = await put(s.apiUrl, s.apiKey, 'u');
    const pub = await publish(art.artifact_id, { visibility: 'unlisted' });
    const slug = pub.json.page_id;
    const off = await unpublish(art.artifact_id);
    expect(off.status, off.text).toBe(200);
    expect(off.json).toEqual({ page_id: slug, unpublished: true });
    expect((await getArtifact(art.artifact_id)).json.page).toBeNull();
    expect((await unpublish(art.artifact_id)).json).toEqual({ page_id: slug, unpublished: true });
    expect((await unpublish(slug)).json).toEqual({ page_id: slug, unpublished: true });
    const back = await publish(art.artifact_id, { visibility: 'unlisted' });
    expect(back.json.page_id).toBe(slug);
    expect(back.json.public_url).toBe(pub.json.public_url);
    expect((await unpublish(slug)).json).toEqual({ page_id: slug, unpublished: true });
    expect((await getArtifact(art.artifact_id)).json.page).toBeNull();
  });

  it('refuses bad bodies with invalid_request', async () => {
    const art = await put(s.apiUrl, s.apiKey, 'b');
    const id = art.artifact_id;
    expectError(await publish(id, {}), 400, 'invalid_request');
    expectError(await publish(id, { visibility: 'secret' }), 400, 'invalid_request');
    expectError(await publish(id, { visibility: 'unlisted', access: 'everyone' }), 400, 'invalid_request');
    expectError(await publish(id, { visibility: 'unlisted', access: 'password' }), 400, 'invalid_request');
    expectError(
      await publish(id, { visibility: 'unlisted', access: 'password', password: '' }),
      400,
      'invalid_request',
    );
    expectError(await publish(id, { visibility: 'unlisted', title: 'x'.repeat(201) }), 400, 'invalid_request');
    expectError(await publish(id, '{"visibility":'), 400, 'invalid_request');
    expect((await getArtifact(id)).json.page).toBeNull();
  });

  it('password access: Pro only (403 quota_exceeded with upgrade_url), never for HTML or XHTML', async () => {
    const freeArt = await put(s.apiUrl, freeKey, 'f', { filename: 'f.md' });
    const free = await publish(
      freeArt.artifact_id,
      { visibility: 'unlisted', access: 'password', password: 'pw' },
      freeKey,
    );
    expectError(free, 403, 'quota_exceeded');
    expect(free.json.error.upgrade_url).toMatch(/^https?:\/\//);
    for (const content_type of ['text/html', 'application/xhtml+xml', 'text/html; charset=utf-8']) {
      const html = await put(s.apiUrl, s.apiKey, '<p>x</p>', { filename: 'x.html', content_type });
      expectError(
        await publish(html.artifact_id, { visibility: 'unlisted', access: 'password', password: 'pw' }),
        400,
        'invalid_request',
      );
      // An open page of HTML is fine.
      expect((await publish(html.artifact_id, { visibility: 'unlisted' })).status).toBe(200);
    }
  });

  it('hashes passwords with Argon2id at the OWASP parameters, never storing the password', async () => {
    const { slug } = await passwordPage('hunter2-long-enough');
    const row = await s.core.deps.sharingStore.getPageBySlug(slug);
    expect(row?.page.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row?.page.passwordHash).not.toContain('hunter2');
  });

  it('re-publishing without a password drops the gate and the stored hash', async () => {
    const { art, slug } = await passwordPage();
    expect((await gateInfo(slug)).status).toBe(200);
    await publish(art.artifact_id, { visibility: 'unlisted' });
    expectError(await gateInfo(slug), 404, 'artifact_not_found');
    expect((await s.core.deps.sharingStore.getPageBySlug(slug))?.page.passwordHash).toBeNull();
  });

  it('deleted and expired artifacts: publish → 410; soft delete unpublishes at once', async () => {
    const art = await put(s.apiUrl, s.apiKey, 'd');
    const { json } = await publish(art.artifact_id, { visibility: 'unlisted' });
    expect((await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${art.artifact_id}`)).status).toBe(200);
    expect((await s.core.deps.sharingStore.getPageBySlug(json.page_id))?.page.live).toBe(false);
    expect(await s.core.pages.resolve(json.page_id)).toBeNull();
    expectError(await publish(art.artifact_id, { visibility: 'unlisted' }), 410, 'artifact_already_deleted');

    const short = await put(s.apiUrl, s.apiKey, 'e', { ttl: '1h' });
    const live = await publish(short.artifact_id, { visibility: 'unlisted' });
    expect(await s.core.pages.resolve(live.json.page_id)).not.toBeNull();
    clock.advance(2 * 3_600_000);
    expect(await s.core.pages.resolve(live.json.page_id)).toBeNull();
    expectError(await publish(short.artifact_id, { visibility: 'unlisted' }), 410, 'artifact_expired');
  });

  it('is not counted against the monthly quota, but is refused once the quota is reached', async () => {
    const key = await s.createTenant(`quota-${Date.now()}`, 'free');
    const art = await put(s.apiUrl, key, 'q');
    const before = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_requests_month;
    await publish(art.artifact_id, { visibility: 'unlisted' }, key);
    await publish(art.artifact_id, { visibility: 'public' }, key);
    await unpublish(art.artifact_id, key);
    const after = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_requests_month;
    expect(after).toBe(before + 1); // the second whoami only

    // Fill the month, then: publish refused, unpublish (a takedown) still works, nothing counted.
    const tenant = (await s.core.tenants.authenticate(key)).tenant;
    const month = new Date(clock.now()).toISOString().slice(0, 7);
    await s.core.requests.flush();
    const used = await s.core.deps.tenantStore.getRequestCount(tenant.id, month);
    await s.core.deps.tenantStore.addRequests([{ tenantId: tenant.id, month, n: 10_000 - used }]);
    await s.core.requests.flush();
    expectError(await publish(art.artifact_id, { visibility: 'unlisted' }, key), 403, 'quota_exceeded');
    expect((await unpublish(art.artifact_id, key)).status).toBe(200);
    await s.core.requests.flush();
    expect(await s.core.deps.tenantStore.getRequestCount(tenant.id, month)).toBe(10_000);
  });
});

describe('operator takedown', () => {
  it('sticks: publish is refused with 403 page_taken_down until the operator restores the page', async () => {
    const { art, slug } = await passwordPage('pw');
    expect((await gateInfo(slug)).status).toBe(200);
    expect(await s.core.pages.takeDown(slug)).toMatchObject({ slug, live: false, takenDownAt: clock.now() });
    expectError(await gateInfo(slug), 404, 'artifact_not_found');
    for (const body of [
      { visibility: 'unlisted' },
      { visibility: 'public', title: 'back', access: 'password', password: 'pw2' },
    ]) {
      const refused = await publish(art.artifact_id, body);
      expectError(refused, 403, 'page_taken_down');
      expect(refused.json.error.message).toMatch(/operator/);
    }
    // Validation still comes first, and nothing of the refused publishes was written.
    expectError(await publish(art.artifact_id, { visibility: 'nope' }), 400, 'invalid_request');
    expect((await s.core.deps.sharingStore.getPageBySlug(slug))?.page).toMatchObject({
      live: false,
      access: 'password',
    });
    expect((await getArtifact(art.artifact_id)).json.page).toBeNull();

    await s.core.pages.restore(slug);
    expect(await s.core.pages.resolve(slug)).toBeNull();
    const back = await publish(art.artifact_id, { visibility: 'unlisted' });
    expect(back.status, back.text).toBe(200);
    expect(back.json.page_id).toBe(slug);
    expect(await s.core.pages.resolve(slug)).not.toBeNull();
  });

  it('is documented in the OpenAPI responses of publish', async () => {
    const doc = (await api(s.apiUrl, null, 'GET', '/v1/openapi.json')).json;
    expect(doc.paths['/v1/artifacts/{id}/publish'].post.responses['403'].description).toContain('page_taken_down');
  });
});

describe('tenant isolation', () => {
  it("another tenant's artifact, artifact id or slug is always artifact_not_found, and the page stays live", async () => {
    const art = await put(s.apiUrl, s.apiKey, 'mine');
    const { json } = await publish(art.artifact_id, { visibility: 'unlisted' });
    expectError(await publish(art.artifact_id, { visibility: 'public' }, otherKey), 404, 'artifact_not_found');
    expectError(await unpublish(art.artifact_id, otherKey), 404, 'artifact_not_found');
    expectError(await unpublish(json.page_id, otherKey), 404, 'artifact_not_found');
    expect(await s.core.pages.resolve(json.page_id)).not.toBeNull();
    expect((await getArtifact(art.artifact_id)).json.page.visibility).toBe('unlisted');
  });

  it('unknown and never-published ids → 404 on unpublish, malformed → 400; publish needs a key', async () => {
    const art = await put(s.apiUrl, s.apiKey, 'never');
    expectError(await unpublish(art.artifact_id), 404, 'artifact_not_found');
    const unknown = await unpublish('pg_AAAAAAAAAAAAAAAA');
    expectError(unknown, 404, 'artifact_not_found');
    expect(unknown.json.error.message).toContain('pg_AAAAAAAAAAAAAAAA');
    const malformed = await unpublish('nonsense');
    expectError(malformed, 400, 'invalid_request');
    expect(malformed.json.error.message).toMatch(/neither an artifact id .* nor a page id/);
    expectError(await publish('art_AAAAAAAAAAAAAAAA', { visibility: 'unlisted' }), 404, 'artifact_not_found');
    expectError(await publish(art.artifact_id, { visibility: 'unlisted' }, ''), 401, 'unauthorized');
  });

  it("a suspended tenant's pages stop resolving and come back on unsuspend", async () => {
    const key = await s.createTenant(`susp-${Date.now()}`, 'pro');
    const art = await put(s.apiUrl, key, 's', { filename: 's.md' });
    const pub = await publish(art.artifact_id, { visibility: 'unlisted', access: 'password', password: 'pw' }, key);
    const slug = pub.json.page_id;
    expect((await gateInfo(slug)).status).toBe(200);
    const tenant = (await s.core.tenants.authenticate(key)).tenant;
    await s.core.deps.tenantStore.updateTenant(tenant.id, { suspended: true });
    expectError(await gateInfo(slug), 404, 'artifact_not_found');
    expectError(await unlock(slug, { password: 'pw' }), 404, 'artifact_not_found');
    expect(await s.core.pages.resolve(slug)).toBeNull();
    await s.core.deps.tenantStore.updateTenant(tenant.id, { suspended: false });
    expect((await gateInfo(slug)).status).toBe(200);
  });
});

describe('gate-info', () => {
  it('200 only for a live password page; every other case is the same 404', async () => {
    const { art, slug } = await passwordPage();
    const ok = await gateInfo(slug);
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ exists: true, access: 'password' });

    const open = await put(s.apiUrl, s.apiKey, 'open');
    const openSlug = (await publish(open.artifact_id, { visibility: 'unlisted' })).json.page_id;
    const bodies = new Set<string>();
    for (const candidate of [openSlug, 'pg_AAAAAAAAAAAAAAAA', 'nope', art.artifact_id]) {
      const r = await gateInfo(candidate);
      expectError(r, 404, 'artifact_not_found');
      bodies.add(JSON.stringify({ ...r.json.error, request_id: undefined }));
    }
    await unpublish(slug);
    const gone = await gateInfo(slug);
    expectError(gone, 404, 'artifact_not_found');
    bodies.add(JSON.stringify({ ...gone.json.error, request_id: undefined }));
    expect(bodies.size).toBe(1);
  });
});

describe('unlock', () => {
  it('trades the right password for an HS256 content token with slug, purpose and exp (300 s)', async () => {
    const { slug } = await passwordPage('s3cret!');
    const r = await unlock(slug, { password: 's3cret!' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.expires_in).toBe(300);
    const [header, payload, sig] = r.json.content_token.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(claims).toEqual({
      slug,
      purpose: 'page_content',
      exp: Math.floor(clock.now() / 1000) + 300,
      pwb: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
    });
    expect(sig.length).toBeGreaterThan(40);
    expect(await accepts(slug, r.json.content_token)).toBe(true);
    clock.advance(301_000);
    expect(await accepts(slug, r.json.content_token)).toBe(false);
  });

  it('a token opens only its own slug, and can never call the API', async () => {
    const a = await passwordPage('pw-a');
    const b = await passwordPage('pw-b');
    const token = (await unlock(a.slug, { password: 'pw-a' })).json.content_token;
    expect(await accepts(b.slug, token)).toBe(false);
    // Tampered claims with the old signature are refused.
    const [h, , sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ slug: b.slug, purpose: 'page_content', exp: 9e9 })).toString(
      'base64url',
    );
    expect(await accepts(b.slug, `${h}.${forged}.${sig}`)).toBe(false);
    for (const [method, path] of [
      ['GET', '/v1/whoami'],
      ['GET', '/v1/artifacts'],
      ['GET', `/v1/artifacts/${a.art.artifact_id}`],
      ['DELETE', `/v1/artifacts/${a.art.artifact_id}/publish`],
    ] as const) {
      expectError(await api(s.apiUrl, token, method, path), 401, 'unauthorized');
    }
    expect(await s.core.pages.resolve(a.slug)).not.toBeNull();
  });

  it('wrong password → 401; missing page, open page or unpublished → 404; bad bodies → 400', async () => {
    const { slug } = await passwordPage('right');
    expectError(await unlock(slug, { password: 'wrong' }), 401, 'unauthorized');
    expectError(await unlock('pg_AAAAAAAAAAAAAAAA', { password: 'right' }), 404, 'artifact_not_found');
    const open = await put(s.apiUrl, s.apiKey, 'o');
    const openSlug = (await publish(open.artifact_id, { visibility: 'unlisted' })).json.page_id;
    expectError(await unlock(openSlug, { password: 'right' }), 404, 'artifact_not_found');
    expectError(await unlock(slug, {}), 400, 'invalid_request');
    expectError(await unlock(slug, { password: '' }), 400, 'invalid_request');
    expectError(await unlock(slug, { password: 42 }), 400, 'invalid_request');
    expectError(await unlock(slug, '{"password":'), 400, 'invalid_request');
    await unpublish(slug);
    expectError(await unlock(slug, { password: 'right' }), 404, 'artifact_not_found');
  });

  it('caps attempts per slug before any hashing, with Retry-After', async () => {
    const { slug } = await passwordPage('right');
    for (let i = 0; i < 10; i++) expectError(await unlock(slug, { password: `guess-${i}` }), 401, 'unauthorized');
    const capped = await unlock(slug, { password: 'right' });
    expectError(capped, 429, 'rate_limited');
    expect(Number(capped.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(capped.json.error.retry_after_seconds).toBe(Number(capped.headers.get('retry-after')));
    clock.advance(61_000);
    expect((await unlock(slug, { password: 'right' })).status).toBe(200);
  });

  it('caps attempts per IP across slugs', async () => {
    let refused = 0;
    for (let i = 0; i < 35; i++) {
      const r = await unlock(`pg_${String(i).padStart(16, 'Z')}`, { password: 'x' });
      if (r.status === 429) refused++;
      else expectError(r, 404, 'artifact_not_found');
    }
    expect(refused).toBe(5);
  });
});
