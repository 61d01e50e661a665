import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HIGHLIGHT_MAX_BYTES } from '../../src/http/render/preview/code.js';
import { PREVIEW_MAX_BYTES } from '../../src/http/render/preview/index.js';
import { FOLD_MAX_BYTES } from '../../src/http/render/preview/json.js';
import { publishContent, unlockInViewer, unlockToken } from '../helpers/pages.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Readable previews (issue 35) over HTTP: which renderer each kind gets on both origins, the
 * headers of the preview documents, what they contain, the bounded prefix, and that gated pages
 * choose by stored type only. In Chromium: test/browser/previews.test.ts.
 */

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});

afterAll(async () => {
  await s?.close();
});

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');

async function shell(slug: string): Promise<string> {
  const r = await fetch(`${s.viewerUrl}/a/${slug}`);
  expect(r.status).toBe(200);
  return r.text();
}

async function preview(slug: string, token?: string): Promise<{ res: Response; body: string }> {
  const res = await fetch(`${s.contentUrl}/c/${slug}${token ? `?token=${encodeURIComponent(token)}` : ''}`);
  return { res, body: await res.text() };
}

function expectPreviewHeaders(res: Response): void {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("default-src 'none'");
  expect(csp).toMatch(/(^|; )sandbox;/);
  expect(csp).not.toContain('script-src');
  expect(csp).not.toContain('allow-');
  expect(csp).toContain(`frame-ancestors ${s.viewerUrl}`);
}

describe('preview kinds', () => {
  it('text and logs: numbered lines, ANSI colours as classes, other controls visible, never raw', async () => {
    const log = 'start\n\u001b[31mred error\u001b[0m plain\n\u001b]0;title\u0007\u001b[2Kbell\u0007 <b>x</b>\n';
    const { slug } = await publishContent(s, { filename: 'run.log', content: log });
    expect(await shell(slug)).toContain('preview-frame preview-text');
    const { res, body } = await preview(slug);
    expectPreviewHeaders(res);
    expect(body).toContain('<span class="l">start</span>');
    expect(body).toContain('<span class="fg1">red error</span> plain');
    // A BEL has nothing to show: dropped.
    expect(body).toContain('bell &lt;b&gt;x&lt;/b&gt;');
    expect(body).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(body.match(/class="l"/g)).toHaveLength(3);
  });

  it('code by extension on open pages: highlighted on the server, comments escaped', async () => {
    const code = 'def f(x):\n    """doc\n    more"""\n    return x  # </script><script>alert(1)</script>\n';
    const { slug } = await publishContent(s, { filename: 'f.py', content: code });
    const { res, body } = await preview(slug);
    expectPreviewHeaders(res);
    expect(body).toContain('<span class="hljs-keyword">def</span>');
    expect(body).toContain('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    // The docstring spans two lines: each line gets its own, balanced span.
    expect(body).toContain('<span class="l">    <span class="hljs-string">&quot;&quot;&quot;doc</span></span>');
    expect(body).toContain('<span class="l"><span class="hljs-string">    more&quot;&quot;&quot;</span></span>');
    expect(body).not.toContain('<script');
  });

  it('diffs are coloured by line', async () => {
    const diff = '--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-old\n+new\n same\n';
    const { slug } = await publishContent(s, { filename: 'fix.patch', content: diff });
    const { body } = await preview(slug);
    expect(body).toContain('<span class="d-del">-old</span>');
    expect(body).toContain('<span class="d-add">+new</span>');
    expect(body).toContain('<span class="d-hunk">@@ -1,2 +1,2 @@</span>');
    expect(body).toContain('<span class="l"> same</span>');
  });

  it('JSON: pretty and foldable with <details>; invalid JSON shown as text with a note', async () => {
    const doc = { name: '<img src=x onerror=alert(1)>', n: 3, ok: true, none: null, list: [1, { deep: 'v' }] };
    const { slug } = await publishContent(s, { filename: 'out.json', content: JSON.stringify(doc) });
    const { res, body } = await preview(slug);
    expectPreviewHeaders(res);
    expect(body).toContain('<details open><summary>{ <span class="c">5 keys</span></summary>');
    expect(body).toContain(
      '<span class="k">&quot;name&quot;</span>: <span class="s">&quot;&lt;img src=x onerror=alert(1)&gt;&quot;</span>,',
    );
    expect(body).toContain('<span class="n">3</span>');
    expect(body).not.toContain('<img');

    const bad = await publishContent(s, { filename: 'bad.json', content: '{"a": 1,' });
    const r = await preview(bad.slug);
    expect(r.body).toContain('This file is not valid JSON; it is shown as text.');
    expect(r.body).toContain('<span class="l">{&quot;a&quot;: 1,</span>');
  });

  it('CSV: a table with a header, the first 1,000 rows and a note of how many more; TSV too', async () => {
    const rows = ['id,name,"note, quoted"'];
    for (let i = 1; i <= 1_250; i++) rows.push(`${i},row ${i},"say ""hi""\non two lines"`);
    const { slug } = await publishContent(s, { filename: 'data.csv', content: rows.join('\r\n') });
    const { res, body } = await preview(slug);
    expectPreviewHeaders(res);
    expect(body).toContain(
      '<thead><tr><th class="rn">#</th><th>id</th><th>name</th><th>note, quoted</th></tr></thead>',
    );
    expect(body).toContain('<td>say &quot;hi&quot;\non two lines</td>');
    expect(body.match(/<tr>/g)).toHaveLength(1_001);
    expect(body).toContain('Showing the first 1,000 of 1,250 rows; 250 more are in the download.');

    const tsv = await publishContent(s, { filename: 't.tsv', content: 'a\tb\n1\t<x>\n' });
    const t = await preview(tsv.slug);
    expect(t.body).toContain('<td>1</td><td>&lt;x&gt;</td>');
  });

  it('transcripts: Claude Code session JSONL as a conversation with models, times and folded tools', async () => {
    const { slug } = await publishContent(s, {
      filename: 'session.jsonl',
      content: fixture('claude-code-session.jsonl'),
      transcript: true,
    });
    expect(await shell(slug)).toContain('preview-transcript');
    const { res, body } = await preview(slug);
    expectPreviewHeaders(res);
    expect(body).toContain('<article class="turn user"><header><span class="role">user</span>');
    expect(body).toContain('<span class="model">claude-sonnet-4-5-20250929</span>');
    expect(body).toContain('<time datetime="2026-11-20T09:14:09.455Z">');
    expect(body).toContain('<details class="thinking"><summary>Thinking</summary>');
    expect(body).toContain('<details class="tool-call"><summary>Tool call · Bash</summary>');
    expect(body).toContain('<details class="tool-result error"><summary>Tool error</summary>');
    expect(body).toContain('<span class="model">claude-opus-4-1-20250805</span>');
    expect(body.match(/<article class="turn /g)).toHaveLength(5);
    expect(body).toContain('<details class="turn system event"><summary>Summary: Fix the flaky upload test</summary>');
    expect(body).toContain('<details class="turn system event"><summary>file-history-snapshot</summary>');
  });

  it('transcripts: OpenAI-shaped chat messages, recognised by content even without the metadata', async () => {
    const { slug } = await publishContent(s, { filename: 'chat.ndjson', content: fixture('openai-chat.jsonl') });
    const { body } = await preview(slug);
    expect(body).toContain('<article class="turn system">');
    expect(body).toContain('<details class="tool-call"><summary>Tool call · get_weather</summary>');
    expect(body).toContain('<span class="k">&quot;city&quot;</span>: <span class="s">&quot;Paris&quot;</span>');
    expect(body).toContain('<details class="tool-result"><summary>Tool result · get_weather</summary>');
    expect(body).toContain('<span class="model">gpt-5</span>');
  });

  it('NDJSON that is no transcript: one pretty record per line, bad lines as text', async () => {
    const { slug } = await publishContent(s, { filename: 'events.ndjson', content: '{"a":1,"b":[2]}\nnot json <i>\n' });
    const { body } = await preview(slug);
    expect(body).toContain('<div class="record"><pre>{\n  &quot;a&quot;: 1,');
    expect(body).toContain('<div class="record"><pre>not json &lt;i&gt;</pre></div>');
  });

  it('large files: a bounded prefix is read, cut on a character boundary, with a note', async () => {
    // Three-byte characters, so that the 2 MiB cut falls inside one.
    const big = `${'€'.repeat(40)}\n`.repeat(Math.ceil((PREVIEW_MAX_BYTES + 5_000) / 121));
    const { slug } = await publishContent(s, { filename: 'big.log', content: big });
    const { body } = await preview(slug);
    expect(body).toContain('This preview shows the first 2.0 MB of 2.0 MB; the rest is in the download.');
    expect(body).not.toContain('\ufffd');
    const lines = body.match(/class="l"/g)?.length ?? 0;
    expect(lines).toBeGreaterThan(17_000);
    expect(lines).toBeLessThan(Math.ceil(PREVIEW_MAX_BYTES / 121) + 2);
  });

  it('costly renderings have their own, smaller limits: highlighting to 128 KiB, folding to 256 KiB', async () => {
    const line = 'const x = 1; // comment\n';
    const fill = (size: number) => line.repeat(Math.ceil(size / line.length)).slice(0, size);
    const small = await publishContent(s, { filename: 'a.ts', content: fill(HIGHLIGHT_MAX_BYTES) });
    expect((await preview(small.slug)).body).toContain('<span class="hljs-keyword">const</span>');
    const big = await publishContent(s, { filename: 'b.ts', content: fill(HIGHLIGHT_MAX_BYTES + 1) });
    const plain = (await preview(big.slug)).body;
    expect(plain).not.toContain('<span class="hljs');
    expect(plain).toContain('<span class="l">const x = 1; // comment</span>');

    const json = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ id: i, name: `item ${i}` })));
    const folded = await publishContent(s, { filename: 'f.json', content: json(100) });
    expect((await preview(folded.slug)).body).toContain('<details open>');
    const large = json(12_000);
    expect(large.length).toBeGreaterThan(FOLD_MAX_BYTES);
    const flat = await publishContent(s, { filename: 'g.json', content: large });
    const body = (await preview(flat.slug)).body;
    expect(body).toContain('This JSON is large: it is shown pretty-printed, without folding.');
    expect(body).not.toContain('<details');
    expect(body).toContain('<span class="l">    &quot;name&quot;: &quot;item 11999&quot;</span>');
  });

  it('download=1 still sends the exact bytes as an attachment', async () => {
    const { slug } = await publishContent(s, { filename: 'a.json', content: '{"x":1}' });
    const r = await fetch(`${s.contentUrl}/c/${slug}?download=1`);
    expect(r.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(await r.text()).toBe('{"x":1}');
  });
});

describe('gated pages choose by stored type only', () => {
  it('a .py stored as text/plain is plain text, not code; metadata does not make a transcript', async () => {
    const code = await publishContent(
      s,
      { filename: 'f.py', content: 'def f(): pass\n', content_type: 'text/plain' },
      { visibility: 'unlisted', access: 'password', password: 'pw-1234' },
    );
    const token = await unlockToken(s, code.slug, 'pw-1234');
    const r = await preview(code.slug, token);
    expectPreviewHeaders(r.res);
    expect(r.res.headers.get('cache-control')).toBe('private, no-store');
    expect(r.body).toContain('<span class="l">def f(): pass</span>');
    expect(r.body).not.toContain('<span class="hljs');

    const t = await publishContent(
      s,
      {
        filename: 't.txt',
        content: fixture('claude-code-session.jsonl'),
        content_type: 'text/plain',
        metadata: { type: 'transcript' },
      },
      { visibility: 'unlisted', access: 'password', password: 'pw-1234' },
    );
    const tt = await preview(t.slug, await unlockToken(s, t.slug, 'pw-1234'));
    expect(tt.body).not.toContain('class="turn');
    expect(tt.body).toContain('class="lines"');
  });
});

describe('sharing tags', () => {
  it('open pages: Open Graph and Twitter tags from filename, size, agent and model; share panel with expiry', async () => {
    const { slug } = await publishContent(
      s,
      {
        filename: 'report.csv',
        content: 'a,b\n1,2\n',
        agent_id: 'planner',
        metadata: { model: 'claude-x' },
        ttl: '7d',
      },
      { visibility: 'unlisted', title: 'Q3 numbers' },
    );
    const html = await shell(slug);
    expect(html).toContain('<meta property="og:title" content="Q3 numbers">');
    expect(html).toContain('<meta property="og:description" content="report.csv · 8 B · by planner · claude-x">');
    expect(html).toContain(`<meta property="og:url" content="${s.viewerUrl}/a/${slug}">`);
    expect(html).toContain('<meta name="twitter:card" content="summary">');
    expect(html).toContain(
      `<input id="share-link" class="share-link" type="url" readonly value="${s.viewerUrl}/a/${slug}"`,
    );
    expect(html).toMatch(/Available until <time datetime="[0-9T:.-]+Z">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
    expect(html).not.toContain('1,2');
  });

  it('open raster image pages name the image for a large card; SVG and other kinds do not', async () => {
    const png = await publishContent(s, {
      filename: 'chart.png',
      content: 'not really a png',
      content_type: 'image/png',
    });
    const html = await shell(png.slug);
    expect(html).toContain(`<meta property="og:image" content="${s.contentUrl}/c/${png.slug}">`);
    expect(html).toContain('<meta name="twitter:card" content="summary_large_image">');
    const svg = await publishContent(s, { filename: 'logo.svg', content: '<svg/>', content_type: 'image/svg+xml' });
    const svgHtml = await shell(svg.slug);
    expect(svgHtml).not.toContain('og:image');
    expect(svgHtml).toContain('<meta name="twitter:card" content="summary">');
  });

  it('gated pages: generic tags only, before and after unlock', async () => {
    const { slug } = await publishContent(
      s,
      { filename: 'secret-plan.txt', content: 'the secret', agent_id: 'spy', metadata: { model: 'm-secret' } },
      { visibility: 'unlisted', access: 'password', password: 'pw-1234', title: 'Secret title' },
    );
    const before = await shell(slug);
    const after = await (await unlockInViewer(s, slug, 'pw-1234')).text();
    expect(after).toContain('Secret title');
    for (const page of [before, after]) {
      // The link-preview tags (the unlocked shell's <title> and heading show the page, by design).
      const head = (page.match(/<meta [^>]*>/g) ?? []).join('\n');
      expect(head).toContain('<meta property="og:description" content="A page shared with Cairn.">');
      for (const leak of ['secret-plan', 'Secret title', 'spy', 'm-secret', 'the secret', 'og:url', 'og:image']) {
        expect(head).not.toContain(leak);
      }
    }
  });
});
