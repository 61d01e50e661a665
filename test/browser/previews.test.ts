import { readFileSync } from 'node:fs';
import type { Frame, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { contentFrame, copyToDocs, openControlPage, screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { publishContent, unlockToken } from '../helpers/pages.js';
import type { TestServer } from '../helpers/server.js';

/**
 * Readable previews in real Chromium (issue 35): every kind renders, hostile content in each of
 * them stays text (in the viewer's frame, opened directly, and with no sandbox or policy at all),
 * and the shell lays out on a desktop and a 390 px phone with the frame as the only scroller.
 * Screenshots: test-output/preview-*.png.
 */

let s: TestServer;
let page: Page;
let dialogs: string[];
/** Every URL the browser asked for, to prove previews load nothing. */
let requests: string[];

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

/** Each sets window.__xss (or opens a dialog) if it ever runs as markup or script. */
const PAYLOADS = [
  '<script>window.__xss=1;alert("script")</script>',
  '<img src=x onerror="window.__xss=1;alert(\'img\')">',
  '<svg onload="window.__xss=1"></svg>',
  '"><iframe srcdoc="<script>parent.__xss=1</script>"></iframe>',
  '</pre></div></main><script>window.__xss=1</script>',
  '</span></span></td></tr></table><script>window.__xss=1</script>',
  '</summary></details><img src=x onerror=window.__xss=1>',
  '<a href="javascript:window.__xss=1">click</a>',
  '<meta http-equiv="refresh" content="0;url=javascript:window.__xss=1">',
  '<style>body{background:url(https://evil.example/x.png)}</style>',
  '<base href="https://evil.example/">',
  '<form action="https://evil.example/"><input name=p></form>',
  '\u001b]8;;javascript:window.__xss=1\u001b\\linked\u001b]8;;\u001b\\',
  '\u001b[31m<b onmouseover=window.__xss=1>red</b>\u001b[0m',
  '<!--',
  ']]><script>window.__xss=1</script>',
];
const ALL = PAYLOADS.join('\n');
const oneLine = (p: string) => p.replace(/\n/g, ' ');

/** One file per preview kind, each with the whole corpus where that kind keeps user text. */
const HOSTILE: Record<string, { filename: string; content: string; transcript?: boolean }> = {
  text: { filename: 'hostile.log', content: `${ALL}\n` },
  code: { filename: 'hostile.py', content: PAYLOADS.map((p) => `x = 1  # ${oneLine(p)}\ns = """${p}"""`).join('\n') },
  diff: { filename: 'hostile.diff', content: PAYLOADS.map((p) => `+${oneLine(p)}\n-${oneLine(p)}`).join('\n') },
  json: {
    filename: 'hostile.json',
    content: JSON.stringify({ payloads: PAYLOADS, [PAYLOADS[0] as string]: PAYLOADS[1], nested: { deep: PAYLOADS } }),
  },
  invalidJson: { filename: 'hostile-bad.json', content: `{"a": "${ALL}` },
  csv: {
    filename: 'hostile.csv',
    content: `"${PAYLOADS[0]}",name\n${PAYLOADS.map((p) => `"${p.replace(/"/g, '""')}",${oneLine(p).replace(/[",]/g, ' ')}`).join('\n')}\n`,
  },
  transcript: {
    filename: 'hostile.jsonl',
    transcript: true,
    content: [
      { type: 'user', sessionId: 's', message: { role: 'user', content: ALL }, timestamp: PAYLOADS[0] },
      {
        type: 'assistant',
        sessionId: 's',
        timestamp: '2026-11-20T09:00:00Z',
        message: {
          role: 'assistant',
          model: PAYLOADS[1],
          content: [
            { type: 'thinking', thinking: ALL },
            { type: 'text', text: ALL },
            { type: 'tool_use', id: 't1', name: PAYLOADS[0], input: { command: ALL } },
          ],
        },
      },
      {
        type: 'user',
        sessionId: 's',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: ALL, is_error: true }] },
      },
      { role: 'assistant', content: ALL, tool_calls: [{ function: { name: PAYLOADS[2], arguments: ALL } }] },
      { role: 'tool', name: PAYLOADS[3], content: ALL },
      { type: PAYLOADS[4], sessionId: 's', data: ALL },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  },
  records: { filename: 'hostile-records.ndjson', content: `${JSON.stringify({ x: ALL })}\n${ALL}\n` },
};

const slugs = new Map<string, string>();

useChromium({ per: 'file', context: { viewport: { width: 1280, height: 800 } } }, async (session) => {
  ({ s, page } = session);
  for (const [kind, f] of Object.entries(HOSTILE)) {
    const { slug } = await publishContent(s, f);
    slugs.set(kind, slug);
  }
  dialogs = [];
  requests = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  page.on('request', (r) => requests.push(r.url()));
});

interface DomReport {
  flag: unknown;
  forbidden: string[];
  urls: string[];
}

/** Markup an attacker would need: any element we never emit, any handler, any URL attribute. */
const INSPECT = `(() => {
  const ours = new Set(['HTML','HEAD','META','TITLE','STYLE','BODY','MAIN','P','DIV','SPAN','PRE','DETAILS','SUMMARY',
    'TABLE','THEAD','TBODY','TR','TH','TD','ARTICLE','HEADER','TIME',
    // A transcript's assistant text is Markdown, rendered without links or images.
    'STRONG','EM','CODE','BR','UL','OL','LI','H1','H2','H3','H4','H5','H6','BLOCKQUOTE','HR','S']);
  const forbidden = [];
  const urls = [];
  for (const el of Array.from(document.querySelectorAll('*'))) {
    if (!ours.has(el.tagName)) forbidden.push(el.tagName);
    if ((el.tagName === 'STYLE' || el.tagName === 'META' || el.tagName === 'TITLE') && el.closest('body')) forbidden.push('body ' + el.tagName);
    for (const attr of Array.from(el.attributes)) {
      if (/^on/i.test(attr.name) || attr.name === 'style') forbidden.push(el.tagName + '[' + attr.name + ']');
      if (/^(href|src|srcdoc|action|formaction|background|poster|xlink:href)$/i.test(attr.name)) urls.push(attr.value);
    }
  }
  return { flag: window.__xss, forbidden, urls };
})()`;

async function inspect(target: Page | Frame): Promise<DomReport> {
  return (await target.evaluate(INSPECT)) as DomReport;
}

function expectInert(r: DomReport): void {
  expect(r.flag).toBeUndefined();
  expect(r.forbidden).toEqual([]);
  expect(r.urls).toEqual([]);
}

/** Requests other than the shell and its preview document. */
function strayRequests(slug: string): string[] {
  return requests.filter(
    (u) => !u.startsWith(`${s.viewerUrl}/a/${slug}`) && !u.startsWith(`${s.contentUrl}/c/${slug}`),
  );
}

describe.skipIf(skipBrowser)('previews: hostile content never runs', () => {
  it('the traps work: a dialog and the flag are seen when a script does run', async () => {
    await openControlPage(page, s);
    await page.setContent('<script>window.__xss = 1; alert("control")</script><img src="https://evil.example/x">');
    expect((await inspect(page)).flag).toBe(1);
    expect((await inspect(page)).forbidden).toEqual(['SCRIPT', 'IMG']);
    expect(dialogs).toEqual(['control']);
    dialogs.length = 0;
  });

  it.each(Object.keys(HOSTILE).map((k) => [k]))(
    '%s: inert in the viewer, opened directly and unsandboxed',
    async (kind) => {
      const slug = slugs.get(kind) as string;
      requests = [];
      // 1. As served: the shell frames the preview in an iframe with no sandbox permission.
      await page.goto(`${s.viewerUrl}/a/${slug}`);
      const frame = await contentFrame(page, s, slug);
      expect(await page.locator('iframe').getAttribute('sandbox')).toBe('');
      await page.waitForTimeout(50);
      expectInert(await inspect(frame));
      expect((await inspect(page)).flag).toBeUndefined();
      expect(await page.locator('script').count()).toBe(0);
      // The payload text is there, as text.
      expect(await frame.locator('body').innerText()).toContain('window.__xss=1');
      expect(strayRequests(slug)).toEqual([]);

      // 2. Opened directly, top level: the CSP sandbox still applies.
      const direct = await page.goto(`${s.contentUrl}/c/${slug}`);
      expect(direct?.headers()['content-security-policy']).toMatch(/(^|; )sandbox;/);
      expectInert(await inspect(page));

      // 3. The same HTML with no sandbox and no policy: the escaping alone.
      const rendered = await (await fetch(`${s.contentUrl}/c/${slug}`)).text();
      await openControlPage(page, s);
      await page.setContent(rendered, { waitUntil: 'load' });
      await page.waitForTimeout(50);
      expectInert(await inspect(page));
      expect(dialogs).toEqual([]);
    },
  );
});

/** The shell does not scroll; the frame fills the space below the bar and scrolls itself. */
async function expectFrameIsTheScroller(p: Page, minFrameShare: number): Promise<void> {
  const m = (await p.evaluate(`(() => {
    const f = document.querySelector('iframe').getBoundingClientRect();
    const e = document.scrollingElement;
    return { sh: e.scrollHeight, sw: e.scrollWidth, h: innerHeight, w: innerWidth, top: f.top, bottom: f.bottom, fh: f.height, fw: f.width };
  })()`)) as Record<string, number>;
  expect(m.sh, 'the shell scrolls').toBeLessThanOrEqual(m.h as number);
  expect(m.sw, 'the shell scrolls sideways').toBeLessThanOrEqual(m.w as number);
  expect(m.bottom).toBeLessThanOrEqual(m.h as number);
  expect((m.fh as number) / (m.h as number)).toBeGreaterThan(minFrameShare);
}

describe.skipIf(skipBrowser)('previews: what a reader sees, desktop and 390 px', () => {
  const samples: Record<string, { filename: string; content: string } & Record<string, unknown>> = {
    log: {
      filename: 'build.log',
      content: [
        '\u001b[1m> cairn@0.1.0 test\u001b[0m',
        ...Array.from({ length: 60 }, (_, i) =>
          i % 9 === 4
            ? `\u001b[31m✗ test/upload.test.ts > case ${i} failed: expected 3 to be 4 with a long explanation that needs to wrap on a phone\u001b[0m`
            : `\u001b[32m✓\u001b[0m test/case-${i}.test.ts \u001b[2m(${i * 7} ms)\u001b[0m`,
        ),
      ].join('\n'),
    },
    code: {
      filename: 'retry.ts',
      content:
        '/** Retries fn with exponential backoff. */\nexport async function retry<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {\n  let delay = 100;\n  for (let i = 1; ; i++) {\n    try {\n      return await fn();\n    } catch (err) {\n      if (i >= attempts) throw err;\n      await new Promise((r) => setTimeout(r, delay));\n      delay *= 2; // "backoff"\n    }\n  }\n}\n',
    },
    diff: {
      filename: 'fix.diff',
      content:
        'diff --git a/src/retry.ts b/src/retry.ts\n--- a/src/retry.ts\n+++ b/src/retry.ts\n@@ -7,7 +7,7 @@\n     } catch (err) {\n-      if (i > attempts) throw err;\n+      if (i >= attempts) throw err;\n       await sleep(delay);\n',
    },
    json: {
      filename: 'eval.json',
      content: JSON.stringify({
        run: 42,
        model: 'claude-sonnet-4-5',
        passed: true,
        scores: { reasoning: 0.912, coding: 0.867, retrieval: 0.94 },
        failures: [{ id: 'case-17', reason: 'timeout', details: { ms: 30000, retries: 2 } }],
      }),
    },
    csv: {
      filename: 'results.csv',
      content: `suite,prompt,pass rate,delta\n${Array.from({ length: 1_200 }, (_, i) => `suite-${i % 7},"prompt ${i}, quoted",${(80 + (i % 20)).toFixed(1)} %,${i % 3 ? '+' : '-'}0.${i % 10}`).join('\n')}\n`,
    },
    transcript: { filename: 'session.jsonl', content: fixture('claude-code-session.jsonl'), transcript: true },
    chat: { filename: 'chat.jsonl', content: fixture('openai-chat.jsonl'), transcript: true },
    markdown: {
      filename: 'report.md',
      content: `# Weekly report\n\n${Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: results were steady this week across all suites.`).join('\n\n')}\n`,
    },
  };
  const published = new Map<string, string>();

  beforeAll(async () => {
    if (skipBrowser) return;
    for (const [name, f] of Object.entries(samples)) {
      published.set(
        name,
        (await publishContent(s, { agent_id: 'eval-agent', metadata: { model: 'claude-sonnet-4-5' }, ...f })).slug,
      );
    }
  });

  it.each(Object.keys(samples).map((k) => [k]))('%s: renders, fills the window, screenshots', async (name) => {
    const slug = published.get(name) as string;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    const frame = await contentFrame(page, s, slug);
    await expectFrameIsTheScroller(page, 0.75);
    // The frame's document is taller than the frame: it scrolls (the only scroller).
    // A table scrolls in its own box (so its header can stick); everything else scrolls the document.
    const inner = (await frame.evaluate(`(() => {
      const e = document.querySelector('.tablewrap') || document.scrollingElement;
      return [e.scrollHeight, e.clientHeight];
    })()`)) as number[];
    if (['log', 'csv', 'transcript', 'markdown'].includes(name)) expect(inner[0]).toBeGreaterThan(inner[1] as number);
    await screenshot(page, `preview-${name}`);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    const phoneFrame = await contentFrame(page, s, slug);
    await expectFrameIsTheScroller(page, 0.7);
    // Nothing but the CSV table scrolls sideways; text wraps.
    const wide = (await phoneFrame.evaluate('document.scrollingElement.scrollWidth > innerWidth')) as boolean;
    expect(wide).toBe(false);
    expect(await page.locator('details.about > summary').isVisible()).toBe(true);
    expect(await page.locator('[data-field="content_hash"]').isVisible()).toBe(false);
    await screenshot(page, `preview-${name}-390`);
    await page.click('details.about > summary');
    expect(await page.locator('[data-field="content_hash"]').isVisible()).toBe(true);
    expect(await page.locator('#share-link').inputValue()).toBe(`${s.viewerUrl}/a/${slug}`);
    await screenshot(page, `preview-${name}-390-details`);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('log: colours applied, line numbers shown and not part of the text', async () => {
    const slug = published.get('log') as string;
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    const frame = await contentFrame(page, s, slug);
    const styles = (await frame.evaluate(`[
      getComputedStyle(document.querySelector('.fg1')).color,
      getComputedStyle(document.body).color,
      getComputedStyle(document.querySelector('.l'), '::before').content,
    ]`)) as string[];
    expect(styles[0]).not.toBe(styles[1]);
    expect(styles[2]).toBe('counter(ln)');
    const firstLine = frame.locator('.l').first();
    expect(await firstLine.innerText()).toBe('> cairn@0.1.0 test');
  });

  it('JSON folds and unfolds without script; CSV header stays in view while the table scrolls', async () => {
    const json = published.get('json') as string;
    await page.goto(`${s.viewerUrl}/a/${json}`);
    let frame = await contentFrame(page, s, json);
    const scores = frame.locator('details', { has: frame.locator('summary', { hasText: '"scores"' }) }).first();
    expect(await scores.getAttribute('open')).toBe('');
    await scores.locator('summary').first().click();
    expect(await scores.getAttribute('open')).toBeNull();
    expect(await frame.locator('text="reasoning"').isVisible()).toBe(false);

    const csv = published.get('csv') as string;
    await page.goto(`${s.viewerUrl}/a/${csv}`);
    frame = await contentFrame(page, s, csv);
    expect(await frame.locator('tbody tr').count()).toBe(1_000);
    expect(await frame.locator('.note').innerText()).toBe(
      'Showing the first 1,000 of 1,200 rows; 200 more are in the download.',
    );
    expect(await frame.evaluate('document.scrollingElement.scrollHeight <= innerHeight')).toBe(true);
    await frame.evaluate(`document.querySelector('.tablewrap').scrollTo(0, 5000)`);
    const [headTop, wrapTop] = (await frame.evaluate(`[
      document.querySelector('thead th').getBoundingClientRect().top,
      document.querySelector('.tablewrap').getBoundingClientRect().top,
    ]`)) as number[];
    expect(Math.abs((headTop as number) - (wrapTop as number))).toBeLessThan(3);
    await screenshot(page, 'preview-csv-scrolled');
  });

  it('transcript: turns with model and time; tool calls fold and open on click', async () => {
    const slug = published.get('transcript') as string;
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    const frame = await contentFrame(page, s, slug);
    expect(await frame.locator('article.turn').count()).toBe(5);
    const call = frame.locator('details.tool-call').first();
    expect(await call.getAttribute('open')).toBeNull();
    expect(await call.locator('.json').isVisible()).toBe(false);
    await call.locator('> summary').click();
    expect(await call.locator('.json').isVisible()).toBe(true);
    expect(await call.locator('.json').innerText()).toContain('"command"');
    expect(await frame.locator('article.assistant .model').first().innerText()).toBe('claude-sonnet-4-5-20250929');
    // docs/preview-transcript.png is rewritten only with CAIRN_UPDATE_DOCS_SCREENSHOTS=1.
    await copyToDocs(await screenshot(page, 'preview-transcript-open'), 'preview-transcript.png');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'preview-transcript-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('an unlocked gated page previews by stored type, with the token, and nothing in its tags', async () => {
    const { slug } = await publishContent(
      s,
      { filename: 'notes.txt', content: 'line one\nline two\n', content_type: 'text/plain' },
      { visibility: 'unlisted', access: 'password', password: 'pw-1234', title: 'Private notes' },
    );
    await page.goto(`${s.viewerUrl}/a/${slug}`);
    expect(await page.locator('meta[property="og:title"]').getAttribute('content')).toBe('Protected page');
    await page.fill('#password', 'pw-1234');
    await Promise.all([page.waitForNavigation(), page.click('button[type="submit"]')]);
    const frame = await contentFrame(page, s, slug);
    expect(frame.url()).toContain('token=');
    expect(await frame.locator('.l').allInnerTexts()).toEqual(['line one', 'line two']);
    expect(await page.locator('meta[property="og:title"]').getAttribute('content')).toBe('Protected page');
    expect(await page.locator('meta[property="og:description"]').getAttribute('content')).toBe(
      'A page shared with Cairn.',
    );
    expect(await unlockToken(s, slug, 'pw-1234')).toBeTruthy();
  });
});
