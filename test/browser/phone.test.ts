import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { tenantNameFor } from '../../src/core/accounts/users.js';
import { contentFrame, makePng, screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { eventually, put } from '../helpers/e2e.js';
import { pkcePair, registerClient } from '../helpers/hosted.js';
import { publishContent } from '../helpers/pages.js';
import type { TestServer } from '../helpers/server.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

/**
 * Every dashboard and viewer page on a 390 px phone in Chromium: the page never scrolls sideways
 * (a wide table scrolls inside its own box), no table cell breaks a line between two letters or
 * digits ("FILEN AME"), and headers and short timestamps stay on one line. Screenshots go to
 * test-output/phone-*.
 */

const WIDTH = 390;
let s: TestServer;
let page: Page;

useChromium(
  {
    per: 'file',
    context: { viewport: { width: WIDTH, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
    // The webhooks pages' receiver listens on loopback.
    server: { env: { CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1' } },
  },
  (session) => {
    ({ s, page } = session);
  },
);

/**
 * What does not fit: the document's width beyond the viewport, and every header, `.nowrap` cell
 * or one-word cell whose text the browser laid out on more than one line.
 */
const FIT_PROBE = `(() => {
  const word = /[\\p{L}\\p{N}]/u;
  // Lines a cell's text takes, and whether one of its breaks falls between two letters or digits.
  const layout = (el) => {
    const tops = new Set();
    let midWord = false;
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      let prevTop = null;
      for (let i = 0; i < n.length; i++) {
        const range = document.createRange();
        range.setStart(n, i);
        range.setEnd(n, i + 1);
        const r = [...range.getClientRects()].find((x) => x.width > 0);
        if (!r) continue;
        const top = Math.round(r.top);
        tops.add(top);
        if (prevTop !== null && top > prevTop && word.test(n.data[i]) && word.test(n.data[i - 1] ?? '')) midWord = true;
        prevTop = top;
      }
    }
    return { lines: tops.size, midWord };
  };
  const broken = [...document.querySelectorAll('th, td')]
    // The details table (key: value) wraps long values such as a SHA-256 on purpose.
    .filter((el) => !el.closest('table.fields') || el.tagName === 'TH')
    .filter((el) => {
      const { lines, midWord } = layout(el);
      return midWord || ((el.tagName === 'TH' || el.classList.contains('nowrap')) && lines > 1);
    })
    .map((el) => el.textContent.trim());
  const wide = [...document.querySelectorAll('body *')]
    .filter((el) => el.getBoundingClientRect().right > ${WIDTH} + 0.5)
    .slice(0, 6)
    .map((el) => el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).replace(/ /g, '.') : ''));
  return { width: document.documentElement.scrollWidth, broken, wide };
})()`;

async function expectFits(target: Page | Frame, name: string): Promise<void> {
  const { width, broken, wide } = (await target.evaluate(FIT_PROBE)) as {
    width: number;
    broken: string[];
    wide: string[];
  };
  expect(width, `${name} is ${width} px wide: ${wide.join(', ')}`).toBeLessThanOrEqual(WIDTH);
  expect(broken, `${name}: text broken over lines`).toEqual([]);
}

async function visit(url: string, name: string): Promise<void> {
  const r = await page.goto(url);
  expect(r?.status(), url).toBeLessThan(500);
  await expectFits(page, name);
  await screenshot(page, `phone-${name}`);
}

async function clickAndWait(selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

const WIDE_TABLE = `# Quarterly figures

| Filename | Description | Throughput | Latency | Region | Owner | Timestamp |
|---|---|---|---|---|---|---|
| measurements-2026-q3.parquet | weekly aggregate of every request | 1,234,567 | 12.5 ms | eu-central-1 | observability | 2026-11-22T08:00:00Z |
| measurements-2026-q2.parquet | the same, one quarter earlier | 1,111,111 | 13.0 ms | us-east-1 | observability | 2026-08-22T08:00:00Z |
`;

describe.skipIf(skipBrowser)('at 390 px', () => {
  it('every dashboard page fits: no sideways page scroll, no word broken in a table', async () => {
    await visit(`${s.apiUrl}/signup`, 'signup');
    await page.fill('#email', 'phone-person-with-a-long-address@example.com');
    await page.fill('#password', 'a good long password');
    await clickAndWait('button[type="submit"]');
    await expectFits(page, 'overview (new tenant)');
    await screenshot(page, 'phone-overview');

    await page.goto(`${s.apiUrl}/dashboard/keys`);
    await clickAndWait('form[action="/dashboard/keys"] button');
    const key = (await page.textContent('[data-secret]'))?.trim() ?? '';
    await expectFits(page, 'new key');
    await visit(`${s.apiUrl}/dashboard/keys`, 'keys');

    const long = 'a-rather-long-filename-for-a-phone-screen-with-no-spaces-at-all.md';
    const { artifact } = await publishContent(
      s,
      { filename: long, content: WIDE_TABLE, session_id: 'session-with-a-long-label-2026-11-22', agent_id: 'agent-7' },
      { visibility: 'unlisted', title: 'Quarterly figures' },
      key,
    );
    await publishContent(
      s,
      { filename: 'chart.png', content: makePng(800, 400), content_type: 'image/png' },
      undefined,
      key,
    );
    await visit(`${s.apiUrl}/dashboard`, 'overview');
    await visit(`${s.apiUrl}/dashboard/artifacts`, 'artifacts');
    await visit(`${s.apiUrl}/dashboard/artifacts/${artifact.artifact_id}`, 'artifact');
    await clickAndWait('[data-links] form button');
    await expectFits(page, 'artifact with a share link');
    await screenshot(page, 'phone-artifact-links');
    await visit(`${s.apiUrl}/dashboard/artifacts/${artifact.artifact_id}/delete`, 'confirm-delete');
    await visit(`${s.apiUrl}/dashboard/apps`, 'apps');

    // The consent screen of an MCP client connecting with OAuth.
    const client = await registerClient(s.apiUrl, ['http://127.0.0.1:9/callback'], 'Phone Agent');
    const { challenge } = pkcePair();
    await visit(
      `${s.apiUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: 'http://127.0.0.1:9/callback',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'phone',
        resource: `${s.apiUrl}/mcp`,
      })}`,
      'consent',
    );
    await page.goto(`${s.apiUrl}/dashboard`);
    await clickAndWait('form[action="/logout"] button');
    await visit(`${s.apiUrl}/login`, 'login');
  });

  it('the webhooks pages fit, the delivery log with its attempts too', async () => {
    const rx = await startReceiver('/hooks/a-rather-long-path-for-a-phone-screen/with-no-spaces-at-all');
    try {
      await visit(`${s.apiUrl}/signup`, 'signup-webhooks');
      await page.fill('#email', 'phone-webhooks@example.com');
      await page.fill('#password', 'a good long password');
      await clickAndWait('button[type="submit"]');
      await visit(`${s.apiUrl}/dashboard/webhooks`, 'webhooks-empty');
      await page.fill('#wh-url', rx.url);
      await page.check('input[name="type.artifact.created"]');
      await page.fill('#wh-session', 'session-with-a-long-label-2026-11-22');
      await clickAndWait('form[action="/dashboard/webhooks"] button');
      await expectFits(page, 'new webhook');
      await screenshot(page, 'phone-webhooks-new');
      const id = (await page.getAttribute('[data-webhook]', 'data-webhook')) ?? '';
      const me = await s.core.tenants.byName(tenantNameFor('phone-webhooks@example.com'));
      const key = await s.core.tenants.createKey(me);
      rx.answer = (r) => (r.body.includes('second') ? 503 : 200);
      await put(s.apiUrl, key, 'first', { session_id: 'session-with-a-long-label-2026-11-22' });
      await put(s.apiUrl, key, 'second', { session_id: 'session-with-a-long-label-2026-11-22' });
      const attempts = async () => (await s.core.deps.webhookStore.listDeliveries(me.id, id, 10)).length;
      await eventually(async () => (await attempts()) >= 2, 5000, 'two delivery attempts');
      await visit(`${s.apiUrl}/dashboard/webhooks`, 'webhooks');
      await visit(`${s.apiUrl}/dashboard/webhooks/${id}`, 'webhook-log');
      expect(await page.locator('[data-delivery]').count()).toBeGreaterThanOrEqual(2);
      await visit(`${s.apiUrl}/dashboard/webhooks/${id}/rotate`, 'confirm-rotate');
      await clickAndWait('[data-confirm-button]');
      await expectFits(page, 'rotated secret');
    } finally {
      await rx.close();
    }
  });

  it('every viewer page fits, and a wide Markdown table scrolls in its own box without splitting words', async () => {
    const md = await publishContent(
      s,
      { filename: 'figures.md', content: WIDE_TABLE },
      { visibility: 'unlisted', title: 'Quarterly figures' },
    );
    await visit(`${s.viewerUrl}/a/${md.slug}`, 'viewer-markdown');
    const frame = await contentFrame(page, s, md.slug);
    await expectFits(frame, 'the rendered Markdown');
    const table = (await frame.evaluate(
      `(() => { const t = document.querySelector('table'); return { scroll: t.scrollWidth, client: t.clientWidth }; })()`,
    )) as { scroll: number; client: number };
    expect(table.scroll).toBeGreaterThan(table.client);

    const img = await publishContent(
      s,
      { filename: 'chart.png', content: makePng(1200, 600), content_type: 'image/png' },
      { visibility: 'unlisted' },
    );
    await visit(`${s.viewerUrl}/a/${img.slug}`, 'viewer-image');
    const bin = await publishContent(
      s,
      {
        filename: 'model-weights-with-a-very-long-name-v2026-11-22.safetensors',
        content: Buffer.alloc(5000, 1),
        content_type: 'application/octet-stream',
      },
      { visibility: 'unlisted', title: 'A rather long page title that will not fit on one line of a phone' },
    );
    await visit(`${s.viewerUrl}/a/${bin.slug}`, 'viewer-download');
    const gated = await publishContent(
      s,
      { filename: 'secret.md', content: WIDE_TABLE },
      { visibility: 'unlisted', access: 'password', password: 'open sesame' },
    );
    await visit(`${s.viewerUrl}/a/${gated.slug}`, 'viewer-password');
    await page.fill('input[name="password"]', 'wrong');
    await clickAndWait('button[type="submit"]');
    await expectFits(page, 'wrong password');
    await page.fill('input[name="password"]', 'open sesame');
    await clickAndWait('button[type="submit"]');
    await expectFits(page, 'unlocked');
    await screenshot(page, 'phone-viewer-unlocked');
    await visit(`${s.viewerUrl}/a/pg_AAAAAAAAAAAAAAAA`, 'viewer-404');
    await page.goto(`${s.viewerUrl}/a/${md.slug}`);
    // On a phone the side panel is folded: open it, then the report form inside it.
    await page.click('details.about > summary');
    await page.click('details.report > summary');
    await page.selectOption('select[name="reason"]', 'spam');
    await clickAndWait('form[action$="/report"] button');
    await expectFits(page, 'report thanks');
    await screenshot(page, 'phone-viewer-report');
  });
});
