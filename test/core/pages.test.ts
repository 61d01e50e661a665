import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Caller } from '../../src/core/tenants.js';
import { type CoreHarness, codeOf, coreHarness } from './harness.js';

/**
 * Public pages in the core (spec: Page, publish/unpublish, gate-info, unlock, report; docs/pages.md):
 * the publish rules, the slug's life, operator takedown, the password gate and its caps, reports,
 * and when resolve() serves a page at all. test/e2e and test/browser keep the viewer, the content
 * origin and the forms.
 */

let h: CoreHarness;
beforeEach(async () => {
  h = await coreHarness();
});
afterEach(async () => {
  await h.close();
});

const IP = '203.0.113.7';
const MISSING_SLUG = 'pg_0000000000000000';

async function markdown(t: Caller, name = 'notes.md') {
  return (await h.upload(t, '# Notes', { filename: name })).artifact_id;
}

async function passwordPage(t: Caller, password = 'correct horse') {
  const id = await markdown(t);
  const page = await h.core.pages.publish(t, id, { visibility: 'unlisted', access: 'password', password });
  return { id, slug: page.page_id };
}

describe('publish', () => {
  it('answers {page_id, public_url, visibility, access} with a pg_ slug on the viewer origin', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    const page = await h.core.pages.publish(t, id, { visibility: 'unlisted', title: 'Findings' });
    expect(page).toEqual({
      page_id: expect.stringMatching(/^pg_[A-Za-z0-9]{16}$/),
      public_url: `${h.core.deps.origins.viewer}/a/${page.page_id}`,
      visibility: 'unlisted',
      access: 'none',
    });
    expect((await h.core.artifacts.get(t, id)).page).toEqual({ public_url: page.public_url, visibility: 'unlisted' });
  });

  it('requires visibility unlisted or public, and access none or password', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    for (const body of [
      {},
      { visibility: 'private' },
      { visibility: 'UNLISTED' },
      { visibility: 'public', access: 'secret' },
      null,
      [],
      'unlisted',
    ]) {
      await expect(h.core.pages.publish(t, id, body)).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    }
    await expect(h.core.pages.publish(t, id, { visibility: 'public' })).resolves.toMatchObject({
      visibility: 'public',
    });
  });

  it('refuses password access without a password, and a password without password access', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    for (const body of [
      { visibility: 'unlisted', access: 'password' },
      { visibility: 'unlisted', access: 'password', password: '' },
      { visibility: 'unlisted', access: 'password', password: 42 },
      { visibility: 'unlisted', password: 'stray' },
    ]) {
      await expect(h.core.pages.publish(t, id, body)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('with password access is Pro only: on Free it is quota_exceeded (403) with upgrade_url', async () => {
    const t = await h.tenant('free', 'free');
    const id = await markdown(t);
    await expect(
      h.core.pages.publish(t, id, { visibility: 'unlisted', access: 'password', password: 'pw' }),
    ).rejects.toMatchObject({ code: 'quota_exceeded', status: 403, extras: { upgradeUrl: expect.any(String) } });
    // Free may publish open pages.
    await expect(h.core.pages.publish(t, id, { visibility: 'unlisted' })).resolves.toMatchObject({ access: 'none' });
  });

  it('refuses a password for text/html and application/xhtml+xml (with parameters too), not for others', async () => {
    const t = await h.tenant('acme');
    const gated = { visibility: 'unlisted', access: 'password', password: 'pw' };
    for (const [filename, contentType] of [
      ['a.html', 'text/html'],
      ['a.xhtml', 'application/xhtml+xml'],
      ['b.html', 'Text/HTML; charset=utf-8'],
    ]) {
      const id = (await h.upload(t, '<p>x</p>', { filename, contentType })).artifact_id;
      await expect(h.core.pages.publish(t, id, gated)).rejects.toMatchObject({ code: 'invalid_request' });
      // The same artifact may be published open.
      await expect(h.core.pages.publish(t, id, { visibility: 'unlisted' })).resolves.toMatchObject({ access: 'none' });
    }
    const svg = (await h.upload(t, '<svg/>', { filename: 'a.svg' })).artifact_id;
    await expect(h.core.pages.publish(t, svg, gated)).resolves.toMatchObject({ access: 'password' });
  });

  it('the HTML refusal names what works instead, and on Free the plan reason too, in one answer', async () => {
    const gated = { visibility: 'unlisted', access: 'password', password: 'pw' };
    const pro = await h.tenant('pro-html');
    const proHtml = (await h.upload(pro, '<p>x</p>', { filename: 'a.html' })).artifact_id;
    const proErr = await h.core.pages.publish(pro, proHtml, gated).catch((e: unknown) => e);
    expect(proErr).toMatchObject({ code: 'invalid_request', extras: {} });
    expect((proErr as Error).message).toMatch(/^Password access is not available for HTML artifacts/);
    expect((proErr as Error).message).toMatch(/download link/);
    expect((proErr as Error).message).not.toMatch(/Pro plan/);
    const free = await h.tenant('free-html', 'free');
    const freeHtml = (await h.upload(free, '<p>x</p>', { filename: 'a.html' })).artifact_id;
    const freeErr = await h.core.pages.publish(free, freeHtml, gated).catch((e: unknown) => e);
    expect(freeErr).toMatchObject({ code: 'invalid_request', extras: { upgradeUrl: expect.any(String) } });
    expect((freeErr as Error).message).toMatch(/not available for HTML artifacts.*also need the Pro plan/s);
    // A non-HTML file on Free gets the plan's answer alone, as before.
    const md = (await h.upload(free, '# x', { filename: 'a.md' })).artifact_id;
    await expect(h.core.pages.publish(free, md, gated)).rejects.toMatchObject({ code: 'quota_exceeded' });
  });

  it('of an artifact that cannot be read: 404 unknown or another tenant’s, 410 deleted, 410 expired', async () => {
    const t = await h.tenant('acme');
    for (const { why, id, code } of await h.unreadable(t)) {
      expect(await codeOf(h.core.pages.publish(t, id, { visibility: 'unlisted' })), why).toBe(code);
    }
  });
});

describe('the slug', () => {
  it('is minted once: re-publishing keeps it and updates title, visibility and access', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    const first = await h.core.pages.publish(t, id, { visibility: 'unlisted', title: 'One' });
    const again = await h.core.pages.publish(t, id, {
      visibility: 'public',
      access: 'password',
      password: 'pw',
      title: 'Two',
    });
    expect(again).toEqual({ ...first, visibility: 'public', access: 'password' });
    const live = await h.core.pages.resolve(first.page_id);
    expect(live?.page).toMatchObject({ title: 'Two', visibility: 'public', access: 'password' });
  });

  it('survives unpublish then publish: the same page_id and URL', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    const first = await h.core.pages.publish(t, id, { visibility: 'unlisted' });
    await h.core.pages.unpublish(t, id);
    expect(await h.core.pages.resolve(first.page_id)).toBeNull();
    expect(await h.core.pages.publish(t, id, { visibility: 'unlisted' })).toEqual(first);
    expect(await h.core.pages.resolve(first.page_id)).not.toBeNull();
  });

  it('is one per artifact: two artifacts get two slugs', async () => {
    const t = await h.tenant('acme');
    const a = await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' });
    const b = await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' });
    expect(a.page_id).not.toBe(b.page_id);
  });
});

describe('unpublish', () => {
  it('by artifact id or by slug answers {page_id, unpublished: true} and takes the page offline at once', async () => {
    const t = await h.tenant('acme');
    const a = await markdown(t);
    const b = await markdown(t);
    const pa = await h.core.pages.publish(t, a, { visibility: 'unlisted' });
    const pb = await h.core.pages.publish(t, b, { visibility: 'unlisted' });
    expect(await h.core.pages.unpublish(t, a)).toEqual({ page_id: pa.page_id, unpublished: true });
    expect(await h.core.pages.unpublish(t, pb.page_id)).toEqual({ page_id: pb.page_id, unpublished: true });
    expect(await h.core.pages.resolve(pa.page_id)).toBeNull();
    expect(await h.core.pages.resolve(pb.page_id)).toBeNull();
    // The artifact is untouched; its record says it has no page.
    expect((await h.core.artifacts.get(t, a)).page).toBeNull();
  });

  it('is idempotent: again answers the same page_id', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    const page = await h.core.pages.publish(t, id, { visibility: 'unlisted' });
    await h.core.pages.unpublish(t, id);
    expect(await h.core.pages.unpublish(t, id)).toEqual({ page_id: page.page_id, unpublished: true });
    expect(await h.core.pages.unpublish(t, page.page_id)).toEqual({ page_id: page.page_id, unpublished: true });
  });

  it('of a never-published artifact, an unknown slug or another tenant’s page is artifact_not_found', async () => {
    const t = await h.tenant('acme');
    const other = await h.tenant('other');
    const theirs = await markdown(other);
    const theirPage = await h.core.pages.publish(other, theirs, { visibility: 'unlisted' });
    for (const id of [await markdown(t), MISSING_SLUG, theirs, theirPage.page_id]) {
      await expect(h.core.pages.unpublish(t, id)).rejects.toMatchObject({ code: 'artifact_not_found', status: 404 });
    }
    expect(await h.core.pages.resolve(theirPage.page_id)).not.toBeNull();
    await expect(h.core.pages.unpublish(t, 'notes.md')).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('happens by itself when the artifact is soft-deleted', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    const page = await h.core.pages.publish(t, id, { visibility: 'unlisted' });
    await h.core.artifacts.softDelete(t, id);
    expect(await h.core.pages.resolve(page.page_id)).toBeNull();
    expect(await h.core.pages.unpublish(t, page.page_id)).toEqual({ page_id: page.page_id, unpublished: true });
  });
});

describe('operator takedown', () => {
  it('takes any tenant’s page offline and keeps it down: the owner’s publish is page_taken_down', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    const page = await h.core.pages.publish(t, id, { visibility: 'unlisted' });
    expect(await h.core.pages.takeDown(page.page_id)).toMatchObject({ slug: page.page_id, live: false });
    expect(await h.core.pages.resolve(page.page_id)).toBeNull();
    await expect(h.core.pages.publish(t, id, { visibility: 'unlisted' })).rejects.toMatchObject({
      code: 'page_taken_down',
      status: 403,
    });
    await h.core.pages.unpublish(t, id);
    await expect(h.core.pages.publish(t, id, { visibility: 'public' })).rejects.toMatchObject({
      code: 'page_taken_down',
    });
    expect(await h.core.pages.resolve(page.page_id)).toBeNull();
  });

  it('restore lifts it but publishes nothing; the owner’s next publish brings the same slug back', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    const page = await h.core.pages.publish(t, id, { visibility: 'unlisted' });
    await h.core.pages.takeDown(page.page_id);
    await h.core.pages.restore(page.page_id);
    expect(await h.core.pages.resolve(page.page_id)).toBeNull();
    expect(await h.core.pages.publish(t, id, { visibility: 'unlisted' })).toEqual(page);
    expect(await h.core.pages.resolve(page.page_id)).not.toBeNull();
  });

  it('of a malformed or unknown slug is null', async () => {
    expect(await h.core.pages.takeDown('nope')).toBeNull();
    expect(await h.core.pages.takeDown(MISSING_SLUG)).toBeNull();
    expect(await h.core.pages.restore(MISSING_SLUG)).toBeNull();
  });
});

describe('what resolve() serves', () => {
  it('a live page; not once its artifact expires (before any sweeper), nor a malformed or unknown slug', async () => {
    const t = await h.tenant('acme');
    const id = (await h.upload(t, '# x', { filename: 'x.md', ttl: '1h' })).artifact_id;
    const page = await h.core.pages.publish(t, id, { visibility: 'unlisted' });
    expect((await h.core.pages.resolve(page.page_id))?.artifact.id).toBe(id);
    h.clock.advance(3_600_000);
    expect(await h.core.pages.resolve(page.page_id)).toBeNull();
    expect(await h.core.pages.resolve(MISSING_SLUG)).toBeNull();
    expect(await h.core.pages.resolve('pg_short')).toBeNull();
  });

  it('nothing while the tenant is suspended; the page comes back when the suspension is lifted', async () => {
    const t = await h.tenant('acme');
    const page = await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' });
    await h.core.tenants.setSuspended(t.tenant, true);
    expect(await h.core.pages.resolve(page.page_id)).toBeNull();
    await h.core.tenants.setSuspended(t.tenant, false);
    expect(await h.core.pages.resolve(page.page_id)).not.toBeNull();
  });
});

describe('gate-info', () => {
  it('answers {exists: true, access: password} for a live password page only', async () => {
    const t = await h.tenant('acme');
    const { slug } = await passwordPage(t);
    expect(await h.core.pages.gateInfo(slug)).toEqual({ exists: true, access: 'password' });
  });

  it('is the same artifact_not_found for an open, unpublished, expired, suspended or unknown page', async () => {
    const t = await h.tenant('acme');
    const suspended = await h.tenant('suspended');
    const open = await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' });
    const unpublished = await passwordPage(t);
    await h.core.pages.unpublish(t, unpublished.slug);
    const expiring = (await h.upload(t, 'x', { filename: 'x.txt', ttl: '1h' })).artifact_id;
    const expired = await h.core.pages.publish(t, expiring, {
      visibility: 'unlisted',
      access: 'password',
      password: 'p',
    });
    const ofSuspended = await passwordPage(suspended);
    await h.core.tenants.setSuspended(suspended.tenant, true);
    h.clock.advance(3_600_000);
    for (const slug of [open.page_id, unpublished.slug, expired.page_id, ofSuspended.slug, MISSING_SLUG, 'x']) {
      await expect(h.core.pages.gateInfo(slug)).rejects.toMatchObject({ code: 'artifact_not_found', status: 404 });
    }
  });
});

describe('unlock', () => {
  it('with the right password answers a content token for 300 s that the content origin accepts for this page', async () => {
    const t = await h.tenant('acme');
    const { slug } = await passwordPage(t);
    const result = await h.core.pages.unlock(slug, { password: 'correct horse' }, IP);
    expect(result).toEqual({ content_token: expect.any(String), expires_in: 300 });
    const live = await h.core.pages.resolve(slug);
    expect(h.core.pages.acceptsContentToken(live!.page, result.content_token)).toBe(true);
    h.clock.advance(300_000);
    expect(h.core.pages.acceptsContentToken(live!.page, result.content_token)).toBe(false);
  });

  it('with a wrong password is unauthorized (401)', async () => {
    const t = await h.tenant('acme');
    const { slug } = await passwordPage(t);
    await expect(h.core.pages.unlock(slug, { password: 'Correct horse' }, IP)).rejects.toMatchObject({
      code: 'unauthorized',
      status: 401,
    });
  });

  it('with a missing or empty password is invalid_request', async () => {
    const t = await h.tenant('acme');
    const { slug } = await passwordPage(t);
    for (const body of [{}, { password: '' }, { password: 7 }, null, 'correct horse']) {
      await expect(h.core.pages.unlock(slug, body, IP)).rejects.toMatchObject({ code: 'invalid_request' });
    }
  });

  it('of an open, unpublished or unknown page is artifact_not_found', async () => {
    const t = await h.tenant('acme');
    const open = await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' });
    const gated = await passwordPage(t);
    await h.core.pages.unpublish(t, gated.id);
    for (const slug of [open.page_id, gated.slug, MISSING_SLUG]) {
      await expect(h.core.pages.unlock(slug, { password: 'correct horse' }, IP)).rejects.toMatchObject({
        code: 'artifact_not_found',
      });
    }
  });

  it('is capped at 10 attempts a minute per page, from any IP, before the password is checked', async () => {
    const t = await h.tenant('acme');
    const { slug } = await passwordPage(t);
    const other = await passwordPage(t);
    for (let i = 0; i < 10; i++) {
      await expect(h.core.pages.unlock(slug, { password: 'wrong' }, `198.51.100.${i}`)).rejects.toMatchObject({
        code: 'unauthorized',
      });
    }
    // The right password, from a fresh IP: still refused, with a Retry-After.
    await expect(h.core.pages.unlock(slug, { password: 'correct horse' }, '192.0.2.1')).rejects.toMatchObject({
      code: 'rate_limited',
      status: 429,
      extras: { retryAfterSeconds: expect.any(Number) },
    });
    // Another page is not affected.
    await expect(h.core.pages.unlock(other.slug, { password: 'correct horse' }, '192.0.2.1')).resolves.toMatchObject({
      expires_in: 300,
    });
    h.clock.advance(60_000);
    await expect(h.core.pages.unlock(slug, { password: 'correct horse' }, '192.0.2.1')).resolves.toMatchObject({
      expires_in: 300,
    });
  });

  it('is capped at 30 attempts a minute per client IP over all pages', async () => {
    const t = await h.tenant('acme');
    for (let i = 0; i < 30; i++) {
      // Unknown slugs cost no hashing of a real page, and still count.
      await expect(
        h.core.pages.unlock(`pg_${String(i).padStart(16, '0')}`, { password: 'x' }, IP),
      ).rejects.toMatchObject({
        code: 'artifact_not_found',
      });
    }
    const { slug } = await passwordPage(t);
    await expect(h.core.pages.unlock(slug, { password: 'correct horse' }, IP)).rejects.toMatchObject({
      code: 'rate_limited',
    });
    await expect(h.core.pages.unlock(slug, { password: 'correct horse' }, '192.0.2.1')).resolves.toMatchObject({
      expires_in: 300,
    });
  });

  it('tokens stop working when the page is re-published with a password (a fresh hash), even the same one', async () => {
    const t = await h.tenant('acme');
    const { id, slug } = await passwordPage(t);
    const { content_token } = await h.core.pages.unlock(slug, { password: 'correct horse' }, IP);
    await h.core.pages.publish(t, id, { visibility: 'unlisted', access: 'password', password: 'correct horse' });
    const live = await h.core.pages.resolve(slug);
    expect(h.core.pages.acceptsContentToken(live!.page, content_token)).toBe(false);
    const fresh = await h.core.pages.unlock(slug, { password: 'correct horse' }, IP);
    expect(h.core.pages.acceptsContentToken(live!.page, fresh.content_token)).toBe(true);
  });

  it('tokens are for one page: another password page refuses them', async () => {
    const t = await h.tenant('acme');
    const a = await passwordPage(t, 'same');
    const b = await passwordPage(t, 'same');
    const { content_token } = await h.core.pages.unlock(a.slug, { password: 'same' }, IP);
    const pageB = await h.core.pages.resolve(b.slug);
    expect(h.core.pages.acceptsContentToken(pageB!.page, content_token)).toBe(false);
  });
});

describe('report', () => {
  it('always answers {received: true}: unknown, malformed and unpublished slugs, any body', async () => {
    const t = await h.tenant('acme');
    const { id, slug } = await passwordPage(t);
    await h.core.pages.unpublish(t, id);
    for (const [s, body] of [
      [MISSING_SLUG, { reason: 'spam' }],
      ['not-a-slug', null],
      [slug, 'just text'],
      [slug, { reason: ['spam'], detail: { nested: true } }],
    ] as const) {
      expect(await h.core.pages.report(s, body, IP)).toEqual({ received: true });
    }
    // None of them named a live page: nothing reached the operators.
    expect(h.reports).toEqual([]);
  });

  it('forwards a report of a live page to the operators with its tenant, artifact and reporter', async () => {
    const t = await h.tenant('acme');
    const id = await markdown(t);
    const page = await h.core.pages.publish(t, id, { visibility: 'unlisted' });
    await h.core.pages.report(page.page_id, { reason: 'phishing', detail: 'asks for bank logins' }, IP);
    expect(h.reports).toEqual([
      {
        slug: page.page_id,
        reason: 'phishing',
        detail: 'asks for bank logins',
        tenantName: 'acme',
        artifactId: id,
        reporterIp: IP,
        receivedAt: new Date(h.clock.now()).toISOString(),
      },
    ]);
    // A report takes nothing down.
    expect(await h.core.pages.resolve(page.page_id)).not.toBeNull();
  });

  it('stores a missing, non-string or unknown reason as other, and truncates detail at 2,000 characters', async () => {
    const t = await h.tenant('acme');
    const page = await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' });
    const long = `${'x'.repeat(1999)}😀tail`;
    await h.core.pages.report(page.page_id, { detail: long }, IP);
    await h.core.pages.report(page.page_id, { reason: 3, detail: 7 }, IP);
    await h.core.pages.report(page.page_id, { reason: 'SPAM' }, IP);
    await h.core.pages.report(page.page_id, { reason: 'copyright' }, IP);
    expect(h.reports.map((r) => r.reason)).toEqual(['other', 'other', 'other', 'copyright']);
    expect(h.reports[0]?.detail).toBe(`${'x'.repeat(1999)}😀`);
    expect(h.reports[1]?.detail).toBe('');
  });

  it('is 429 rate_limited beyond 5 an hour from one IP about one page', async () => {
    const t = await h.tenant('acme');
    const page = await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' });
    const other = await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' });
    for (let i = 0; i < 5; i++) await h.core.pages.report(page.page_id, {}, IP);
    await expect(h.core.pages.report(page.page_id, {}, IP)).rejects.toMatchObject({
      code: 'rate_limited',
      status: 429,
    });
    await expect(h.core.pages.report(page.page_id, {}, '192.0.2.1')).resolves.toEqual({ received: true });
    await expect(h.core.pages.report(other.page_id, {}, IP)).resolves.toEqual({ received: true });
    expect(h.reports).toHaveLength(7);
  });

  it('forwards at most 20 an hour from one IP over all pages, still answering received', async () => {
    const t = await h.tenant('acme');
    const slugs = [];
    for (let i = 0; i < 5; i++)
      slugs.push((await h.core.pages.publish(t, await markdown(t), { visibility: 'unlisted' })).page_id);
    for (const slug of slugs) for (let i = 0; i < 5; i++) await h.core.pages.report(slug, {}, IP);
    expect(h.reports).toHaveLength(20);
  });
});
