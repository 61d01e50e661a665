import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { type Rec, withoutRequestId } from '../helpers/e2e.js';
import { form, publishContent, unlockInViewer, unlockToken } from '../helpers/pages.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/** The viewer (`/a/<slug>`) and content (`/c/<slug>`) origins over plain HTTP: headers, gates, 404s. */

const clock = new ManualClock(Date.UTC(2026, 5, 1));
let s: TestServer;

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

const publish = (
  upload: Record<string, unknown> & { filename: string; content: string },
  body: Record<string, unknown> = { visibility: 'unlisted' },
  key = s.apiKey,
): Promise<{ artifact: Rec; slug: string }> => publishContent(s, upload, body, key);

const get = (url: string, init?: RequestInit) => fetch(url, { redirect: 'manual', ...init });
/** The policy of responses that must load, run and be framed by nothing (downloads, errors). */
const LOCKED = "default-src 'none'; sandbox; frame-ancestors 'none'";

/** The headers every answer of a public origin carries, 404s and errors included. */
function expectPublicHeaders(r: Response, what: string): void {
  expect(r.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(r.headers.get('x-robots-tag'), what).toBe('noindex, nofollow');
  expect(r.headers.get('content-security-policy'), what).toMatch(/^default-src 'none';.*frame-ancestors /);
}

describe('content origin /c/<slug>', () => {
  it("HTML: the stored bytes inline, under a sandbox that lets inline scripts run only in the viewer's frame", async () => {
    const html = '<!doctype html><p>hi</p><script>document.title="x"</script>';
    const { slug } = await publish({ filename: 'a.html', content: html, content_type: 'text/html' });
    const framed = { headers: { 'Sec-Fetch-Dest': 'iframe' } };
    const r = await get(`${s.contentUrl}/c/${slug}`, framed);
    expect(r.status).toBe(200);
    expect(await r.text()).toBe(html);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('vary')).toMatch(/Sec-Fetch-Dest/i);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/^sandbox allow-scripts;/);
    expect(csp).not.toMatch(/allow-same-origin/);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'unsafe-inline'");
    expect(csp).toContain(`frame-ancestors ${s.viewerUrl}`);
    expect(r.headers.get('content-disposition')).toMatch(/^inline;/);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-robots-tag')).toMatch(/noindex/);
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');

    const head = await get(`${s.contentUrl}/c/${slug}`, { method: 'HEAD', ...framed });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(html)));

    // Opened as a page of its own: the viewer page instead, whose frame keeps it from moving the tab.
    for (const method of ['GET', 'HEAD']) {
      const direct = await get(`${s.contentUrl}/c/${slug}`, { method, headers: { 'Sec-Fetch-Dest': 'document' } });
      expect(direct.status, method).toBe(303);
      expect(direct.headers.get('location'), method).toBe(`${s.viewerUrl}/a/${slug}`);
    }
    // Fetched for anything else, or by a client that does not say: the bytes, with no script at all.
    for (const dest of [undefined, 'empty', 'object', 'embed', 'script']) {
      const other = await get(`${s.contentUrl}/c/${slug}`, dest ? { headers: { 'Sec-Fetch-Dest': dest } } : {});
      expect(other.status, dest).toBe(200);
      expect(await other.text()).toBe(html);
      const inert = other.headers.get('content-security-policy') ?? '';
      expect(inert, dest).toMatch(/^sandbox; script-src 'none';/);
      expect(inert).not.toMatch(/allow-scripts|script-src 'unsafe-inline'/);
      expect(inert).toContain(`frame-ancestors ${s.viewerUrl}`);
    }

    const dl = await get(`${s.contentUrl}/c/${slug}?download=1`);
    expect(dl.headers.get('content-disposition')).toMatch(/^attachment; filename="a.html"/);
    expect(dl.headers.get('content-security-policy')).toBe(LOCKED);
  });

  it('Markdown: a sanitized document with no scripts at all', async () => {
    const md = '# Title\n\n<script>alert(1)</script> [x](javascript:alert(1))';
    const { slug } = await publish({ filename: 'notes.md', content: md, content_type: 'text/plain' });
    const r = await get(`${s.contentUrl}/c/${slug}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    // Images over https, data: images, and the files beside the page on the content origin itself.
    expect(csp).toContain(`img-src ${s.contentUrl} https: data:`);
    expect(csp).toMatch(/sandbox(?! allow-scripts)/);
    expect(csp).not.toMatch(/script-src|allow-scripts|allow-same-origin/);
    expect(csp).toContain(`frame-ancestors ${s.viewerUrl}`);
    const body = await r.text();
    expect(body).toContain('<h1>Title</h1>');
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt; x');
    expect(body).not.toMatch(/<script|javascript:/i);
    expect(body).toContain('<meta name="robots" content="noindex, nofollow">');
  });

  it('images: inline with their stored type and a policy under which an SVG runs nothing', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>';
    const { slug } = await publish({ filename: 'x.svg', content: svg, content_type: 'image/svg+xml' });
    const r = await get(`${s.contentUrl}/c/${slug}`);
    expect(r.headers.get('content-type')).toBe('image/svg+xml');
    expect(r.headers.get('content-disposition')).toMatch(/^inline;/);
    expect(r.headers.get('content-security-policy')).toMatch(/^default-src 'none';.*sandbox; frame-ancestors 'none'$/);
    expect(await r.text()).toBe(svg);
  });

  it('other types: always an attachment', async () => {
    const { slug } = await publish({ filename: 'x.xhtml', content: '<html/>', content_type: 'application/xhtml+xml' });
    const r = await get(`${s.contentUrl}/c/${slug}`);
    expect(r.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(r.headers.get('content-security-policy')).toBe(LOCKED);
  });

  it('gated pages: only a valid, unexpired token for this slug opens them; no-store', async () => {
    const gate = { visibility: 'unlisted', access: 'password', password: 'pw-1' };
    const { slug } = await publish({ filename: 'g.md', content: '# gated', content_type: 'text/markdown' }, gate);
    const { slug: other } = await publish(
      { filename: 'o.md', content: '# other', content_type: 'text/markdown' },
      gate,
    );
    const token = await unlockToken(s, slug, 'pw-1');
    const ok = await get(`${s.contentUrl}/c/${slug}?token=${token}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('<h1>gated</h1>');
    expect(ok.headers.get('cache-control')).toBe('private, no-store');
    expect(ok.headers.get('referrer-policy')).toBe('no-referrer');
    const dl = await get(`${s.contentUrl}/c/${slug}?download=1&token=${token}`);
    expect(dl.status).toBe(200);
    expect(dl.headers.get('cache-control')).toBe('private, no-store');

    const unknown = await (await get(`${s.contentUrl}/c/pg_AAAAAAAAAAAAAAAA`)).text();
    for (const url of [
      `${s.contentUrl}/c/${slug}`,
      `${s.contentUrl}/c/${slug}?token=`,
      `${s.contentUrl}/c/${slug}?token=${token}x`,
      `${s.contentUrl}/c/${other}?token=${token}`,
      `${s.contentUrl}/c/${slug}?token=${token}&token=${token}`,
      `${s.contentUrl}/c/${slug}?download=1`,
    ]) {
      const r = await get(url);
      expect(r.status, url).toBe(404);
      expect(await r.text()).toBe(unknown);
    }
    clock.advance(301_000);
    expect((await get(`${s.contentUrl}/c/${slug}?token=${token}`)).status).toBe(404);
  });

  it('unlocked shells carry the token: <img> for images, the download card for other types', async () => {
    const gate = { visibility: 'unlisted', access: 'password', password: 'pw-2' };
    const { slug: img } = await publish({ filename: 'p.gif', content: 'GIF89a', content_type: 'image/gif' }, gate);
    const imgShell = await (await unlockInViewer(s, img, 'pw-2')).text();
    expect(imgShell).toMatch(new RegExp(`<img src="${s.contentUrl}/c/${img}\\?token=[\\w.-]+"`));
    const { slug: txt } = await publish({ filename: 'n.zip', content: 'x', content_type: 'application/zip' }, gate);
    const txtShell = await (await unlockInViewer(s, txt, 'pw-2')).text();
    expect(txtShell).toContain('download-card');
    expect(txtShell).not.toContain('<iframe');
    expect(txtShell).toMatch(new RegExp(`href="${s.contentUrl}/c/${txt}\\?download=1&amp;token=[\\w.-]+"`));
  });
});

describe('viewer origin /a/<slug>', () => {
  it('sets a strict policy and escapes every value it shows', async () => {
    const evil = '"><script>alert(1)</script>';
    const { slug } = await publish(
      { filename: 'e.md', content: '# e', agent_id: 'agent-1', metadata: { model: `m${evil}` } },
      { visibility: 'unlisted', title: `T${evil}` },
    );
    const r = await get(`${s.viewerUrl}/a/${slug}`);
    expect(r.status).toBe(200);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`frame-src ${s.contentUrl}`);
    expect(csp).toContain(`img-src ${s.contentUrl}`);
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('script-src');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('x-robots-tag')).toMatch(/noindex/);
    const body = await r.text();
    expect(body).not.toContain('<script');
    expect(body).toContain('T&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(body).toContain('<meta name="robots" content="noindex, nofollow">');
  });

  it('expired and suspended pages get the same 404 as unknown ones, on both origins', async () => {
    const unknownViewer = await (await get(`${s.viewerUrl}/a/pg_AAAAAAAAAAAAAAAA`)).text();
    const unknownContent = await (await get(`${s.contentUrl}/c/pg_AAAAAAAAAAAAAAAA`)).text();
    const { slug: expiring } = await publish({ filename: 'x.md', content: '# x', ttl: '1h' });
    const otherKey = await s.createTenant('to-suspend', 'pro');
    const { slug: suspended } = await publish(
      { filename: 'y.md', content: '# y' },
      { visibility: 'unlisted' },
      otherKey,
    );
    expect((await get(`${s.viewerUrl}/a/${expiring}`)).status).toBe(200);
    expect((await get(`${s.viewerUrl}/a/${suspended}`)).status).toBe(200);

    clock.advance(3_600_000);
    const tenant = (await s.core.tenants.authenticate(otherKey)).tenant;
    await s.core.tenants.setSuspended(tenant, true);
    for (const slug of [expiring, suspended, 'pg_short', '..%2F..%2Fetc']) {
      const v = await get(`${s.viewerUrl}/a/${slug}`);
      expect(v.status, slug).toBe(404);
      expect(await v.text()).toBe(unknownViewer);
      const c = await get(`${s.contentUrl}/c/${slug}`);
      expect(c.status, slug).toBe(404);
      expect(await c.text()).toBe(unknownContent);
    }
  });

  it('unlock form: 400 empty, 401 wrong, 404 for an open page, then 429 with Retry-After', async () => {
    const gate = { visibility: 'unlisted', access: 'password', password: 'pw-3' };
    const { slug } = await publish({ filename: 'l.md', content: '# l', content_type: 'text/markdown' }, gate);
    const { slug: open } = await publish({ filename: 'open.md', content: '# open' });
    expect((await get(`${s.viewerUrl}/a/${slug}/unlock`, form({ password: '' }))).status).toBe(400);
    const wrong = await get(`${s.viewerUrl}/a/${slug}/unlock`, form({ password: 'nope' }));
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain('role="alert"');
    expect((await get(`${s.viewerUrl}/a/${open}/unlock`, form({ password: 'x' }))).status).toBe(404);
    let last: Response | undefined;
    for (let i = 0; i < 12; i++) {
      last = await get(`${s.viewerUrl}/a/${slug}/unlock`, form({ password: 'nope' }));
      if (last.status === 429) break;
    }
    expect(last?.status).toBe(429);
    expect(Number(last?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await last?.text()).toContain('Too many attempts');
  });

  it('report form: thanks for any slug, then a friendly 429', async () => {
    const ok = await get(`${s.viewerUrl}/a/pg_AAAAAAAAAAAAAAAA/report`, form({ reason: 'spam', detail: 'x' }));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Thanks, received');
    let last: Response | undefined;
    for (let i = 0; i < 10; i++) {
      last = await get(`${s.viewerUrl}/a/pg_BBBBBBBBBBBBBBBB/report`, form({ reason: 'other' }));
      if (last.status === 429) break;
    }
    expect(last?.status).toBe(429);
    expect(await last?.text()).toContain('Too many reports');
  });
});

describe('404s and errors off the page routes', () => {
  it('the viewer answers any other path with its one 404 page, under the shell policy', async () => {
    const { slug } = await publish({ filename: 'v.md', content: '# v' });
    const reference = await get(`${s.viewerUrl}/a/pg_AAAAAAAAAAAAAAAA`);
    const page = await reference.text();
    const csp = reference.headers.get('content-security-policy');
    expect(csp).toContain("frame-ancestors 'none'");
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', `/a/${slug}/`],
      ['GET', `/a/${slug}/unlock`],
      ['GET', `/a/${slug}/report`],
      ['GET', '/a/'],
      ['GET', '/nope/deeper'],
      ['POST', '/whatever'],
      ['HEAD', '/'],
    ] as const) {
      const r = await get(`${s.viewerUrl}${path}`, { method });
      const what = `${method} ${path}`;
      expect(r.status, what).toBe(404);
      expect(r.headers.get('content-type'), what).toBe('text/html; charset=utf-8');
      expect(r.headers.get('content-security-policy'), what).toBe(csp);
      expect(r.headers.get('cache-control'), what).toBe('no-store');
      expectPublicHeaders(r, what);
      if (method !== 'HEAD') expect(await r.text(), what).toBe(page);
    }
  });

  it('viewer errors (a form post larger than the viewer takes) carry the same headers', async () => {
    const r = await get(`${s.viewerUrl}/a/pg_AAAAAAAAAAAAAAAA/unlock`, form({ password: 'x'.repeat(20_000) }));
    expect(r.status).toBe(413);
    expect(r.headers.get('content-security-policy')).toBe(LOCKED);
    expectPublicHeaders(r, 'viewer 413');
    expect(((await r.json()) as Rec).error.code).toBe('file_too_large');
  });

  it('the content origin answers other paths under /c/ like an unknown page, and the rest like an unknown link', async () => {
    const page = await get(`${s.contentUrl}/c/pg_AAAAAAAAAAAAAAAA`);
    const pageBody = await page.text();
    expect(page.headers.get('content-security-policy')).toBe(
      `default-src 'none'; sandbox; frame-ancestors ${s.viewerUrl}`,
    );
    const link = await get(`${s.contentUrl}/lnk_AAAAAAAAAAAAAAAAAAAA`);
    const linkBody = await link.json();
    expect(link.headers.get('content-security-policy')).toBe(LOCKED);
    const { slug } = await publish({ filename: 'c.md', content: '# c' });
    for (const path of [`/c/${slug}/`, '/c/', `/c/${slug}/extra`]) {
      const r = await get(`${s.contentUrl}${path}`);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-security-policy'), path).toBe(page.headers.get('content-security-policy'));
      expectPublicHeaders(r, path);
      expect(await r.text(), path).toBe(pageBody);
    }
    for (const path of ['/', '/x/y', '/d/', '/d/art_AAAAAAAAAAAAAAAA/more']) {
      const r = await get(`${s.contentUrl}${path}`);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-security-policy'), path).toBe(LOCKED);
      expectPublicHeaders(r, path);
      // Identical but for the request id every response carries.
      expect(withoutRequestId((await r.json()) as Rec), path).toEqual(withoutRequestId(linkBody as Rec));
    }
  });

  it('downloads (signed URLs, links, page downloads) may not be framed', async () => {
    const { artifact, slug } = await publish({ filename: 'd.bin', content: 'bytes' });
    const id = artifact.artifact_id;
    const signed = (await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}/download-url`)).json.download_url;
    const link = (await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${id}/links`, {})).json.url;
    for (const url of [signed, link, `${s.contentUrl}/c/${slug}`, `${s.contentUrl}/c/${slug}?download=1`]) {
      const r = await get(url);
      expect(r.status, url).toBe(200);
      expect(r.headers.get('content-disposition'), url).toMatch(/^attachment;/);
      expect(r.headers.get('content-security-policy'), url).toBe(LOCKED);
      expectPublicHeaders(r, url);
    }
  });
});
