import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { contentFrame, openControlPage, screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { publishContent } from '../helpers/pages.js';
import type { TestServer } from '../helpers/server.js';

/**
 * An HTML page is untrusted code. Its scripts must run (it is a page, after all), but in an opaque
 * origin: no cookies, no storage, no access to the viewer shell, and no network at all.
 */
function probeHtml(apiUrl: string, viewerUrl: string): string {
  return `<!doctype html><html><head><title>probe</title>
<style>body{font:16px system-ui;margin:2rem;color:#222}h1{color:#2457c5}</style></head><body>
<h1 id="status">running</h1><p>An agent-generated HTML report: its script filled in this box.</p><pre id="out"></pre>
<script>
(function () {
  var r = { ran: true };
  function attempt(name, fn) { try { r[name] = 'ok:' + String(fn()); } catch (e) { r[name] = 'error:' + e.name; } }
  attempt('origin', function () { return self.origin; });
  attempt('cookie', function () { return document.cookie; });
  attempt('parentDom', function () { return window.parent.document.title; });
  attempt('parentCookie', function () { return window.parent.document.cookie; });
  attempt('localStorage', function () { localStorage.setItem('k', 'v'); return localStorage.getItem('k'); });
  var img = new Image(); img.src = ${JSON.stringify(`${apiUrl}/health?beacon=img`)};
  function settle(name, p) {
    return p.then(function (res) { r[name] = 'ok:' + res.type; }, function (e) { r[name] = 'error:' + e.name; });
  }
  Promise.all([
    // no-cors: without a policy this resolves (opaque), so only the CSP can make it fail.
    settle('fetchApi', fetch(${JSON.stringify(`${apiUrl}/health?beacon=fetch`)}, { mode: 'no-cors' })),
    settle('fetchViewer', fetch(${JSON.stringify(`${viewerUrl}/health?beacon=viewer`)}, { mode: 'no-cors', credentials: 'include' })),
  ]).then(function () {
    document.getElementById('out').textContent = JSON.stringify(r, null, 1);
    document.getElementById('status').textContent = 'done';
    console.log('probe-result ' + JSON.stringify(r));
  });
})();
</script></body></html>`;
}

type ProbeResult = Record<string, string | boolean>;
/** Browser-side expressions are strings: the project's TypeScript has no DOM library. */
const PROBE_DONE = "document.getElementById('status')?.textContent === 'done'";

let s: TestServer;
let context: BrowserContext;
let page: Page;
let slug: string | undefined;
/** Every URL any frame of the context fetched (the request finished). */
let requested: string[];
let failed: string[];
let consoleLines: string[];

useChromium({ per: 'test' }, async (session) => {
  ({ s, context, page } = session);
  // One page for the file, published before the first test.
  slug ??= (
    await publishContent(
      s,
      { filename: 'report.html', content: probeHtml(s.apiUrl, s.viewerUrl), content_type: 'text/html' },
      { visibility: 'unlisted', title: 'HTML report' },
    )
  ).slug;
  await context.addCookies([
    { name: 'viewer_secret', value: 'viewer-cookie-value', url: s.viewerUrl },
    { name: 'content_secret', value: 'content-cookie-value', url: s.contentUrl },
  ]);
  requested = [];
  failed = [];
  consoleLines = [];
  // A request the policy blocks may still be announced, then fails; only finished ones got out.
  context.on('requestfinished', (r) => requested.push(r.url()));
  context.on('requestfailed', (r) => failed.push(`${r.failure()?.errorText} ${r.url()}`));
  page.on('console', (m) => consoleLines.push(m.text()));
});

const beacons = () => requested.filter((u) => u.includes('beacon='));

describe.skipIf(skipBrowser)('HTML pages in the viewer', () => {
  it('run their script inside a sandboxed iframe that reaches nothing', async () => {
    const res = await page.goto(`${s.viewerUrl}/a/${slug}`);
    expect(res?.status()).toBe(200);
    const iframe = page.locator('iframe');
    expect(await iframe.getAttribute('sandbox')).toBe('allow-scripts');
    expect(await iframe.getAttribute('src')).toBe(`${s.contentUrl}/c/${slug}`);

    const frame = page.frames().find((f) => f.url().startsWith(`${s.contentUrl}/c/${slug}`));
    expect(
      frame,
      page
        .frames()
        .map((f) => f.url())
        .join(', '),
    ).toBeDefined();
    await frame!.waitForFunction(PROBE_DONE);
    const result = JSON.parse((await frame!.textContent('#out')) ?? '{}') as ProbeResult;

    expect(result.ran).toBe(true);
    expect(result.origin).toBe('ok:null');
    expect(result.cookie).toBe('error:SecurityError');
    expect(result.parentDom).toBe('error:SecurityError');
    expect(result.parentCookie).toBe('error:SecurityError');
    expect(result.localStorage).toBe('error:SecurityError');
    expect(result.fetchApi).toBe('error:TypeError');
    expect(result.fetchViewer).toBe('error:TypeError');
    expect(JSON.stringify(result)).not.toContain('cookie-value');
    // The policy stopped every request before it left the browser, the image beacon too.
    expect(beacons()).toEqual([]);
    expect(failed).toContain(`csp ${s.apiUrl}/health?beacon=img`);
    expect(consoleLines.some((l) => /Content Security Policy/i.test(l))).toBe(true);
    // The shell itself is untouched by the frame.
    expect(await page.locator('header h1').textContent()).toBe('HTML report');
    await screenshot(page, 'viewer-html');
  });

  it('opened directly, the content URL shows the viewer page, whose frame runs the page sandboxed', async () => {
    const res = await page.goto(`${s.contentUrl}/c/${slug}`);
    expect(res?.status()).toBe(200);
    expect(page.url()).toBe(`${s.viewerUrl}/a/${slug}`);
    const frame = await contentFrame(page, s, slug as string);
    await frame.waitForFunction(PROBE_DONE);
    const result = JSON.parse((await frame.textContent('#out')) ?? '{}') as ProbeResult;
    expect(result.origin).toBe('ok:null');
    expect(result.cookie).toBe('error:SecurityError');
    expect(result.localStorage).toBe('error:SecurityError');
    expect(result.fetchApi).toBe('error:TypeError');
    expect(JSON.stringify(result)).not.toContain('cookie-value');
    expect(beacons()).toEqual([]);
  });

  it('a page whose script moves the tab is no redirect hop: in the viewer and opened directly, the tab stays', async () => {
    // The "elsewhere" is a real local URL, so that a tab that moved shows as a wrong URL.
    const elsewhere = `${s.apiUrl}/health?hop=1`;
    const hop = await publishContent(
      s,
      {
        filename: 'hop.html',
        content: `<!doctype html><p id="m">hop</p><script>
document.getElementById('m').textContent = 'ran';
try { top.location.href = ${JSON.stringify(elsewhere)}; } catch (e) {}
try { window.open(${JSON.stringify(elsewhere)}, '_top'); } catch (e) {}
</script>`,
        content_type: 'text/html',
      },
      { visibility: 'unlisted' },
    );
    for (const start of [`${s.viewerUrl}/a/${hop.slug}`, `${s.contentUrl}/c/${hop.slug}`]) {
      await page.goto(start);
      // Give a navigation the script starts every chance to commit before looking.
      await page.waitForLoadState('networkidle');
      expect(page.url(), start).toBe(`${s.viewerUrl}/a/${hop.slug}`);
      expect(
        requested.filter((u) => u.includes('hop=1')),
        start,
      ).toEqual([]);
      // And the script did run (in the frame), so it did try.
      const frame = await contentFrame(page, s, hop.slug);
      await frame.waitForFunction("document.getElementById('m')?.textContent === 'ran'");
    }
  });

  it('control: the same probe without the content policy does reach the network', async () => {
    // Proves the probe can tell: on an ordinary page its requests go out and its origin is real.
    await openControlPage(page, s);
    // The page sees its fetches resolve before this process hears that they finished: wait for
    // that event (on the context, whose listener above records it first), not only for the page.
    const beaconFinished = context.waitForEvent('requestfinished', (r) => r.url().includes('beacon='));
    await page.setContent(probeHtml(s.apiUrl, s.viewerUrl));
    await page.waitForFunction(PROBE_DONE);
    await beaconFinished;
    const result = JSON.parse((await page.textContent('#out')) ?? '{}') as ProbeResult;
    expect(result.origin).toBe(`ok:${s.viewerUrl}`);
    expect(result.cookie).toBe('ok:viewer_secret=viewer-cookie-value');
    expect(result.fetchApi).toBe('ok:opaque');
    expect(beacons().length).toBeGreaterThan(0);
  });
});
