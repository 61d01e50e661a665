import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { contentFrame, makePng, screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { type Rec, uploadJson } from '../helpers/e2e.js';
import { publishContent } from '../helpers/pages.js';
import { api, type TestServer } from '../helpers/server.js';

/**
 * A Markdown report that embeds `chart.png` pushed beside it in the same session (the most common
 * agent output) shows the chart: relative references resolve to artifacts of the page's own tenant
 * and session, through the content origin, and only those the page's document names. Everything
 * else (another tenant's, another session's, a name the page does not use, `..` tricks, a gated
 * or unpublished page) stays out of reach.
 */

let s: TestServer;
let page: Page;

useChromium({ per: 'file', context: { viewport: { width: 1280, height: 800 } } }, (session) => {
  ({ s, page } = session);
});

const REPORT = `# Findings

![Revenue chart](chart.png)

See [the data](./data.csv) and ![missing](nothing-here.png).

Tricks: ![up](../chart.png) ![enc](%2e%2e%2fchart.png) ![abs](/chart.png) ![net](//evil.example/chart.png)
`;

async function store(key: string, filename: string, content: string | Buffer, session: string): Promise<Rec> {
  const body = (typeof content === 'string' ? Buffer.from(content) : content).toString('base64');
  const up = await uploadJson(s.apiUrl, key, { filename, content: body, session_id: session });
  expect(up.status, up.text).toBe(201);
  return up.json;
}

const besideUrl = (slug: string, name: string) => `${s.contentUrl}/c/${slug}/f/${encodeURIComponent(name)}`;

describe.skipIf(skipBrowser)('Markdown pages and the artifacts beside them', () => {
  it('the chart pushed beside the report shows in Chromium; a linked file downloads', async () => {
    await store(s.apiKey, 'chart.png', makePng(240, 120), 'run-beside');
    await store(s.apiKey, 'data.csv', 'region,revenue\nnorth,12\n', 'run-beside');
    const { slug } = await publishContent(s, { filename: 'report.md', content: REPORT, session_id: 'run-beside' });
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    const frame = await contentFrame(page, s, slug);
    const chart = frame.locator('img[alt="Revenue chart"]');
    await chart.waitFor({ state: 'attached' });
    expect(await chart.getAttribute('src')).toBe(`/c/${slug}/f/chart.png`);
    await frame.waitForFunction('[...document.images].some((i) => i.complete && i.naturalWidth === 240)');
    // Tricks are never rewritten: they keep their alt text. A plain name with nothing behind it
    // is rewritten like any other and does not load (the browser shows its alt text).
    const text = (await frame.locator('main').textContent()) ?? '';
    for (const alt of ['up', 'enc', 'abs', 'net']) expect(text).toContain(alt);
    const srcs = await frame.evaluate('[...document.images].map((i) => i.getAttribute("src"))');
    expect(srcs).toEqual([`/c/${slug}/f/chart.png`, `/c/${slug}/f/nothing-here.png`]);
    expect((await fetch(besideUrl(slug, 'nothing-here.png'))).status).toBe(404);
    expect(await frame.locator('a', { hasText: 'the data' }).getAttribute('href')).toBe(`/c/${slug}/f/data.csv`);
    await screenshot(page, 'markdown-beside');

    const csv = await fetch(besideUrl(slug, 'data.csv'));
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(await csv.text()).toBe('region,revenue\nnorth,12\n');
    const png = await fetch(besideUrl(slug, 'chart.png'));
    expect(png.headers.get('content-disposition')).toMatch(/^inline;/);
    expect(png.headers.get('content-security-policy')).toMatch(/sandbox/);
    expect(png.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('nothing the page does not name, nothing of another session or tenant, no path tricks', async () => {
    const session = 'run-secure';
    await store(s.apiKey, 'chart.png', makePng(10, 10), session);
    await store(s.apiKey, 'secret.txt', 'not referenced', session);
    await store(s.apiKey, 'data.csv', 'other session', 'run-other');
    const { slug } = await publishContent(s, { filename: 'report.md', content: REPORT, session_id: session });
    expect((await fetch(besideUrl(slug, 'chart.png'))).status).toBe(200);
    // In the session, but the page never names it.
    expect((await fetch(besideUrl(slug, 'secret.txt'))).status).toBe(404);
    // Named by the page, but only in another session of the tenant.
    expect((await fetch(besideUrl(slug, 'data.csv'))).status).toBe(404);
    for (const trick of ['..%2Fchart.png', '%2e%2e%2fchart.png', '..', '.', 'chart.png%00', 'CHART.PNG']) {
      expect((await fetch(`${s.contentUrl}/c/${slug}/f/${trick}`)).status, trick).toBe(404);
    }
    expect((await fetch(`${s.contentUrl}/c/${slug}/f/sub/chart.png`)).status).toBe(404);

    // Another tenant, same session label, same names: its page reaches only its own artifacts.
    const other = await s.createTenant('other-tenant');
    const theirs = await publishContent(
      s,
      { filename: 'report.md', content: REPORT, session_id: session },
      undefined,
      other,
    );
    expect((await fetch(besideUrl(theirs.slug, 'chart.png'))).status).toBe(404);
    await store(other, 'chart.png', makePng(20, 20), session);
    const own = await fetch(besideUrl(theirs.slug, 'chart.png'));
    expect(own.status).toBe(200);
    expect(Buffer.from(await own.arrayBuffer()).equals(makePng(20, 20))).toBe(true);

    // Deleted beside artifacts go at once; so does everything when the page goes down.
    const secret = await store(s.apiKey, 'nothing-here.png', makePng(5, 5), session);
    expect((await fetch(besideUrl(slug, 'nothing-here.png'))).status).toBe(200);
    await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${secret.artifact_id}`);
    expect((await fetch(besideUrl(slug, 'nothing-here.png'))).status).toBe(404);
    const report = await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${slug}/publish`);
    expect(report.status).toBe(200);
    expect((await fetch(besideUrl(slug, 'chart.png'))).status).toBe(404);
  });

  it('a password page does not resolve relative references, and its /f/ paths answer 404', async () => {
    await store(s.apiKey, 'chart.png', makePng(10, 10), 'run-gated');
    const { slug } = await publishContent(
      s,
      { filename: 'report.md', content: REPORT, session_id: 'run-gated' },
      { visibility: 'unlisted', access: 'password', password: 'pw-for-test' },
    );
    expect((await fetch(besideUrl(slug, 'chart.png'))).status).toBe(404);
  });

  it('a page whose artifact has no session resolves nothing', async () => {
    const { slug } = await publishContent(s, { filename: 'report.md', content: REPORT });
    expect((await fetch(besideUrl(slug, 'chart.png'))).status).toBe(404);
  });
});
