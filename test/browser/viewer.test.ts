import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { contentFrame, makePng, openControlPage, screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { publishContent } from '../helpers/pages.js';
import { api, type TestServer } from '../helpers/server.js';

let s: TestServer;
let context: BrowserContext;
let page: Page;
let consoleLines: string[];

useChromium({ per: 'test', context: { viewport: { width: 1280, height: 800 } } }, (session) => {
  ({ s, context, page } = session);
  consoleLines = [];
  page.on('console', (m) => consoleLines.push(m.text()));
});

/** Submits the form holding `selector` and returns the status of the page it leads to. */
async function submit(button: string): Promise<number | undefined> {
  const [response] = await Promise.all([page.waitForNavigation(), page.click(button)]);
  return response?.status();
}

const SVG_WITH_SCRIPT = `<svg xmlns="http://www.w3.org/2000/svg" width="240" height="120" viewBox="0 0 240 120">
<rect width="240" height="120" rx="12" fill="#2457c5"/><circle cx="60" cy="60" r="34" fill="#ffd166"/>
<script>console.log('svg-script-ran'); document.documentElement.setAttribute('data-ran', '1');</script>
</svg>`;

describe.skipIf(skipBrowser)('the viewer shell in real Chromium', () => {
  it('password page: form, wrong password error, unlock shows the content with a token', async () => {
    const { slug } = await publishContent(
      s,
      { filename: 'secret.md', content: '# Quarterly numbers\n\nFor the board only.' },
      { visibility: 'unlisted', access: 'password', password: 'correct horse', title: 'Board pack' },
    );
    const first = await page.goto(`${s.viewerUrl}/a/${slug}`);
    expect(first?.status()).toBe(200);
    expect(await page.locator('input[type="password"]').count()).toBe(1);
    expect(await page.locator('iframe').count()).toBe(0);
    // Nothing of the page shows before unlock, not even its title.
    expect(await page.content()).not.toContain('Board pack');
    await screenshot(page, 'viewer-password');

    await page.fill('input[name="password"]', 'wrong horse');
    expect(await submit('button[type="submit"]')).toBe(401);
    const alert = page.locator('[role="alert"]');
    expect(await alert.textContent()).toMatch(/password is not right/);
    // It reads as an error: the danger colour, not the muted grey of the text around it.
    const colour = (selector: string) =>
      page.evaluate(`getComputedStyle(document.querySelector(${JSON.stringify(selector)})).color`);
    const danger = await page.evaluate(
      `(() => { const p = document.createElement('span'); p.style.color = 'var(--danger)'; document.body.append(p); return getComputedStyle(p).color; })()`,
    );
    expect(await colour('[role="alert"]')).toBe(danger);
    expect(await colour('.center p:not([role])')).not.toBe(danger);
    expect(await page.locator('iframe').count()).toBe(0);

    await page.fill('input[name="password"]', 'correct horse');
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST') posts.push(r.url());
    });
    expect(await submit('button[type="submit"]')).toBe(200);
    // Post-redirect-get: the address bar shows the page's own URL, which is what gets copied.
    expect(page.url()).toBe(`${s.viewerUrl}/a/${slug}`);
    expect(posts).toEqual([`${s.viewerUrl}/a/${slug}/unlock`]);
    // The token's cookie is for this page's path only, and lives as long as the token.
    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.path, c.httpOnly])).toEqual([['cairn_page', `/a/${slug}`, true]]);
    // A refresh shows the page again and submits nothing.
    expect((await page.reload())?.status()).toBe(200);
    expect(posts).toHaveLength(1);
    expect(await page.locator('iframe').count()).toBe(1);
    // Another browser (no cookie) still gets the password form.
    const stranger = await fetch(`${s.viewerUrl}/a/${slug}`);
    expect(await stranger.text()).toContain('type="password"');
    const iframeSrc = (await page.locator('iframe').getAttribute('src')) ?? '';
    expect(iframeSrc.startsWith(`${s.contentUrl}/c/${slug}?token=`)).toBe(true);
    const frame = await contentFrame(page, s, slug);
    expect(await frame.locator('h1').textContent()).toBe('Quarterly numbers');
    expect(await page.locator('header h1').textContent()).toBe('Board pack');
    const download = (await page.locator('[data-action="download"]').getAttribute('href')) ?? '';
    expect(download).toMatch(new RegExp(`^${s.contentUrl}/c/${slug}\\?download=1&token=`));
    const file = await fetch(download);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-disposition')).toMatch(/^attachment; filename="secret.md"/);
    expect(await file.text()).toContain('For the board only.');
    // Without the token the content origin says the same 404 as for an unknown page.
    expect((await fetch(`${s.contentUrl}/c/${slug}`)).status).toBe(404);
    await screenshot(page, 'viewer-unlocked');
  });

  it('image page: the image decodes', async () => {
    const { slug } = await publishContent(
      s,
      { filename: 'chart.png', content: makePng(640, 360), content_type: 'image/png' },
      { visibility: 'unlisted', title: 'Throughput chart' },
    );
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    const img = page.locator('main img');
    expect(await img.getAttribute('src')).toBe(`${s.contentUrl}/c/${slug}`);
    await img.evaluate((el) => (el as unknown as { decode(): Promise<void> }).decode());
    expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(640);
    await screenshot(page, 'viewer-image');
  });

  it('SVG page: shown through <img>, its script never runs, not even opened directly', async () => {
    const { slug } = await publishContent(
      s,
      { filename: 'logo.svg', content: SVG_WITH_SCRIPT, content_type: 'image/svg+xml' },
      { visibility: 'unlisted' },
    );
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    const img = page.locator('main img');
    await img.evaluate((el) => (el as unknown as { decode(): Promise<void> }).decode());
    expect(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth)).toBe(240);
    expect(await page.locator('main svg, main iframe, main object, main embed').count()).toBe(0);
    await screenshot(page, 'viewer-svg');

    const direct = await page.goto(`${s.contentUrl}/c/${slug}`);
    expect(direct?.headers()['content-type']).toBe('image/svg+xml');
    expect(direct?.headers()['content-security-policy']).toMatch(/default-src 'none'.*sandbox/);
    expect(await page.evaluate("document.documentElement.getAttribute('data-ran')")).toBeNull();
    expect(consoleLines.filter((l) => l.includes('svg-script-ran'))).toEqual([]);

    // Control: the same markup inline in an ordinary page does run, so the check above can fail.
    await openControlPage(page, s);
    await page.setContent(`<!doctype html><body>${SVG_WITH_SCRIPT}</body>`);
    await page.waitForTimeout(50);
    expect(consoleLines.filter((l) => l.includes('svg-script-ran'))).toEqual(['svg-script-ran']);
  });

  it('unknown type: a download card with name, type, size and a working button', async () => {
    const { slug } = await publishContent(
      s,
      { filename: 'weights.bin', content: Buffer.alloc(5000, 7), content_type: 'application/octet-stream' },
      { visibility: 'unlisted' },
    );
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    const card = page.locator('.download-card');
    expect(await card.locator('.name').textContent()).toBe('weights.bin');
    expect(await card.locator('.type').textContent()).toBe('application/octet-stream');
    expect(await card.locator('.size').textContent()).toBe('5.0 KB');
    const href = (await card.locator('a').getAttribute('href')) ?? '';
    expect(href).toBe(`${s.contentUrl}/c/${slug}?download=1`);
    expect(await page.locator('iframe, main img').count()).toBe(0);
    const res = await fetch(href);
    expect(res.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.alloc(5000, 7))).toBe(true);
    await screenshot(page, 'viewer-download');
  });

  it('one identical 404 page for unknown, unpublished and malformed slugs', async () => {
    const { artifact, slug } = await publishContent(s, { filename: 'gone.md', content: '# soon gone' });
    const down = await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${artifact.artifact_id}/publish`);
    expect(down.status, down.text).toBe(200);
    const bodies: string[] = [];
    for (const candidate of [slug, 'pg_AAAAAAAAAAAAAAAA', 'not-a-slug', `${slug}x`]) {
      const res = await page.goto(`${s.viewerUrl}/a/${candidate}`);
      expect(res?.status()).toBe(404);
      bodies.push(await page.content());
    }
    expect(new Set(bodies).size).toBe(1);
    expect(bodies[0]).toContain('Page not found');
    expect(bodies[0]).not.toContain(slug);
    await screenshot(page, 'viewer-404');
  });

  it('report form: posts to the viewer and thanks the reporter', async () => {
    const { slug } = await publishContent(s, { filename: 'spam.md', content: '# Buy now' });
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    await page.click('details.report > summary');
    await page.selectOption('select[name="reason"]', 'spam');
    await page.fill('textarea[name="detail"]', 'Unsolicited advertising <b>bold</b>');
    expect(await submit('form[action$="/report"] button')).toBe(200);
    expect(page.url()).toBe(`${s.viewerUrl}/a/${slug}/report`);
    expect(await page.locator('h1.success').textContent()).toBe('Thanks, received');
  });
});
