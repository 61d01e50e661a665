import type { Frame, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { contentFrame, screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { publishContent } from '../helpers/pages.js';
import type { TestServer } from '../helpers/server.js';

/**
 * Pages of what agents write, on a 390 px phone: a CSV table scrolls sideways instead of breaking
 * words and numbers; a transcript's assistant text is rendered Markdown with times a person reads;
 * a log keeps 256-colour and true-colour codes, drops a BEL and keeps a narrow gutter.
 */

let s: TestServer;
let page: Page;

useChromium({ per: 'test', context: { viewport: { width: 390, height: 844 } } }, (session) => {
  ({ s, page } = session);
});

async function open(upload: Parameters<typeof publishContent>[1]): Promise<Frame> {
  const { slug } = await publishContent(s, upload);
  await page.goto(`${s.viewerUrl}/a/${slug}`);
  return contentFrame(page, s, slug);
}

describe.skipIf(skipBrowser)('previews on a phone', () => {
  it('CSV: the table scrolls sideways; no word or number breaks mid-token', async () => {
    const header = 'region,quarter,revenue_usd,customers,churn_rate,notes';
    const rows = Array.from(
      { length: 20 },
      (_, i) => `north-east-${i},2026-Q3,1234567.89,${9000 + i},0.0425,renewal pending review`,
    );
    const frame = await open({ filename: 'revenue.csv', content: `${header}\n${rows.join('\n')}\n` });
    await frame.waitForSelector('table');
    const wrap = await frame.evaluate(
      '(() => { const w = document.querySelector(".tablewrap"); return [w.scrollWidth, w.clientWidth]; })()',
    );
    const [scrollWidth, clientWidth] = wrap as [number, number];
    expect(scrollWidth).toBeGreaterThan(clientWidth);
    // Every cell of a short token is one line high: nothing broke inside "1234567.89".
    const heights = (await frame.evaluate(
      '[...document.querySelectorAll("tbody tr:first-child td")].map((td) => td.getClientRects()[0].height)',
    )) as number[];
    expect(new Set(heights.map((h) => Math.round(h))).size, String(heights)).toBe(1);
    await screenshot(page, 'phone-csv');
  });

  it('transcript: assistant Markdown rendered and sanitised, times readable', async () => {
    const lines = [
      { type: 'user', timestamp: '2026-11-22T08:00:03.123Z', message: { role: 'user', content: 'Summarise **this**' } },
      {
        type: 'assistant',
        timestamp: '2026-11-22T08:00:09.456Z',
        message: {
          role: 'assistant',
          model: 'claude-opus-4',
          content: [
            {
              type: 'text',
              text: 'Here is **the summary**:\n\n| region | revenue |\n|---|---|\n| north | 12 |\n\n<script>alert(1)</script> [x](javascript:alert(1)) [docs](https://example.com)',
            },
          ],
        },
      },
    ];
    const frame = await open({
      filename: 'session.jsonl',
      content: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
      metadata: { type: 'transcript' },
    });
    await frame.waitForSelector('.turn.assistant');
    expect(await frame.textContent('.turn.assistant .text strong')).toBe('the summary');
    expect(await frame.locator('.turn.assistant .text table td').first().textContent()).toBe('north');
    // Sanitised as Markdown pages are, and inert as every preview: no element from the source, no link.
    expect(await frame.locator('.turn.assistant script').count()).toBe(0);
    expect(await frame.locator('.turn.assistant a').count()).toBe(0);
    expect(await frame.textContent('.turn.assistant .text')).toContain('<script>alert(1)</script>');
    // A user's text stays as written.
    expect(await frame.textContent('.turn.user .text')).toBe('Summarise **this**');
    expect(await frame.textContent('.turn.assistant time')).toBe('2026-11-22 08:00:09 UTC');
    expect(await frame.getAttribute('.turn.assistant time', 'datetime')).toBe('2026-11-22T08:00:09.456Z');
    await screenshot(page, 'phone-transcript');
  });

  it('log: 256-colour and true colour shown, a BEL dropped, a narrow line-number gutter', async () => {
    const log = '\u001b[38;5;208morange\u001b[0m \u001b[38;2;10;200;30mgreen\u001b[0m done\u0007\nsecond line\n';
    const frame = await open({ filename: 'build.log', content: log });
    await frame.waitForSelector('.l');
    const colours = await frame.evaluate(
      '[...document.querySelectorAll(".l span[style]")].map((e) => getComputedStyle(e).color)',
    );
    expect(colours).toEqual(['rgb(255, 135, 0)', 'rgb(10, 200, 30)']);
    expect(await frame.locator('.l').first().textContent()).toBe('orange green done');
    const gutter = await frame.evaluate('parseFloat(getComputedStyle(document.querySelector(".l")).paddingLeft)');
    expect(gutter as number).toBeLessThanOrEqual(45);
    await screenshot(page, 'phone-log');
  });
});
