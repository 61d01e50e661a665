import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { uploadJson } from '../helpers/e2e.js';
import { api, type TestServer } from '../helpers/server.js';

/**
 * What a person sees opening a share link that no longer works: the designed page, not the JSON
 * envelope (which curl, fetch() and the SDKs still get, by `Accept`). And every origin has a
 * favicon, so no page a browser opens logs a 404.
 */

let s: TestServer;
let page: Page;
let consoleLines: string[];

useChromium({ per: 'test', context: { viewport: { width: 390, height: 844 } } }, (session) => {
  ({ s, page } = session);
  consoleLines = [];
  page.on('console', (m) => consoleLines.push(m.text()));
});

async function revokedLink(): Promise<string> {
  const up = await uploadJson(s.apiUrl, s.apiKey, {
    filename: 'gone.txt',
    content: Buffer.from('bye').toString('base64'),
  });
  const link = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${up.json.artifact_id}/links`, {});
  expect(link.status).toBe(201);
  expect((await fetch(link.json.url)).status).toBe(200);
  expect((await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/links/${link.json.link_id}`)).status).toBe(200);
  return link.json.url;
}

describe.skipIf(skipBrowser)('dead links and favicons in real Chromium', () => {
  it('a revoked link opened in a browser is the designed 404 page; clients still get JSON', async () => {
    const url = await revokedLink();
    const res = await page.goto(url);
    expect(res?.status()).toBe(404);
    expect(res?.headers()['content-type']).toMatch(/^text\/html/);
    expect(res?.headers()['vary']).toMatch(/Accept/);
    expect(await page.locator('h1').last().textContent()).toBe('This link does not work any more');
    // Styled (its own inline sheet is allowed by the page's policy), and it fits the phone.
    expect(await page.evaluate('getComputedStyle(document.querySelector(".panel")).borderTopStyle')).toBe('solid');
    expect(await page.evaluate('document.documentElement.scrollWidth <= innerWidth')).toBe(true);
    expect(consoleLines.filter((l) => /Content Security Policy|Refused/.test(l))).toEqual([]);
    // Nothing in the page runs or loads.
    expect(res?.headers()['content-security-policy']).toMatch(/default-src 'none'.*sandbox/);
    await screenshot(page, 'dead-link-phone');

    for (const accept of [undefined, '*/*', 'application/json', 'application/json, text/html;q=0.5']) {
      const r = await fetch(url, { headers: accept ? { accept } : {} });
      expect(r.status, accept).toBe(404);
      expect(r.headers.get('content-type'), accept).toMatch(/^application\/json/);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('artifact_not_found');
    }
  });

  it('a bad signed download URL, a link that never existed and an unknown path: the same page', async () => {
    for (const path of ['/d/art_AAAAAAAAAAAAAAAA?exp=1&sig=00', '/lnk_AAAAAAAAAAAAAAAAAAAA', '/nothing/here']) {
      const res = await page.goto(`${s.contentUrl}${path}`);
      expect(res?.status(), path).toBe(404);
      expect(await page.locator('h1').last().textContent(), path).toBe('This link does not work any more');
    }
  });

  it('/favicon.ico on every origin: a 32x32 icon, and a dashboard page loads with no 404', async () => {
    for (const origin of [s.viewerUrl, s.apiUrl, s.contentUrl]) {
      const res = await fetch(`${origin}/favicon.ico`);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('content-type'), origin).toBe('image/x-icon');
      // The bytes served are an icon Chromium decodes.
      const bytes = Buffer.from(await res.arrayBuffer()).toString('base64');
      await page.setContent('<!doctype html><title>icon</title>');
      const size = await page.evaluate(
        `new Promise((ok) => { const i = new Image(); i.onload = () => ok([i.naturalWidth, i.naturalHeight]); i.onerror = () => ok(null); i.src = 'data:image/x-icon;base64,${bytes}'; })`,
      );
      expect(size, origin).toEqual([32, 32]);
    }
    const statuses: [string, number][] = [];
    page.on('response', (r) => statuses.push([r.url(), r.status()]));
    await page.goto(`${s.apiUrl}/login`);
    await page.waitForLoadState('networkidle');
    expect(statuses.filter(([, st]) => st >= 400)).toEqual([]);
  });
});
