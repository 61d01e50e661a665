import { describe, expect, it } from 'vitest';
import { renderMarkdownWithin } from '../../src/http/render/markdown.js';
import { markdownDocument } from '../../src/http/render/markdown-document.js';
import { PIECE_MAX_CHARS, PREVIEW_MAX_HTML_BYTES, PREVIEW_MAX_ROWS } from '../../src/http/render/preview/budget.js';
import { PREVIEW_MAX_BYTES, type PreviewInput, previewPage } from '../../src/http/render/preview/index.js';
import { numberedLines, renderText } from '../../src/http/render/preview/text.js';

/**
 * The output of every preview kind is bounded, whatever the file: the hostile files of the third
 * probe (2 MiB of newlines became 48 MB of HTML, 2 MiB of `ESC[` 30 MB) and the other ways to make
 * markup much larger than its text. The bound: PREVIEW_MAX_HTML_BYTES of HTML (plus the page's own
 * frame), PREVIEW_MAX_ROWS rows.
 */

const MiB = 1024 * 1024;
/** The page's frame: the stylesheet, the head, the notes. */
const FRAME = 16 * 1024;

function page(kind: PreviewInput['kind'], filename: string, text: string | Buffer, contentType = 'text/plain'): string {
  const bytes = Buffer.from(text).subarray(0, PREVIEW_MAX_BYTES);
  return previewPage({ kind, title: 't', filename, contentType, bytes, sizeBytes: bytes.length }).value;
}

const rows = (html: string) => html.match(/<span class="l[ "]/g)?.length ?? 0;

describe('bounded previews', () => {
  it('2 MiB of newlines: one row saying how many, not 48 MB of empty rows', () => {
    const html = page('text', 'n.txt', '\n'.repeat(2 * MiB));
    expect(html.length).toBeLessThan(FRAME);
    expect(html).toContain('<span class="l gap" style="counter-increment:ln 2097152">2,097,152 empty lines</span>');
  });

  it('a run of empty lines keeps the numbering of the lines after it; two in a row stay as they are', () => {
    expect(numberedLines(['a', '', '', '', '', 'b', '', '', 'c']).value).toBe(
      '<div class="lines"><span class="l">a</span><span class="l gap" style="counter-increment:ln 4">4 empty lines</span>' +
        '<span class="l">b</span><span class="l"></span><span class="l"></span><span class="l">c</span></div>',
    );
  });

  it.each([
    ['ESC[', '\u001b['],
    ['<', '<'],
    ['"', '"'],
    ['ESC and a line break', '\u001b\n'],
    ['a control character between letters', 'a\u0001'],
    ['one letter per line', 'a\n'],
  ])('2 MiB of %s: at most the bound, and a card saying the preview stops', (_name, unit) => {
    const text = unit.repeat(Math.ceil((2 * MiB) / unit.length));
    for (const [kind, filename] of [
      ['text', 'x.log'],
      ['code', 'x.py'],
      ['code', 'x.diff'],
      ['json', 'x.json'],
      ['csv', 'x.csv'],
      ['transcript', 'x.jsonl'],
    ] as const) {
      const html = page(kind, filename, text);
      expect(Buffer.byteLength(html), `${kind} ${filename}`).toBeLessThan(PREVIEW_MAX_HTML_BYTES + FRAME);
      expect(rows(html), `${kind} ${filename}`).toBeLessThanOrEqual(PREVIEW_MAX_ROWS);
    }
    expect(page('text', 'x.log', text)).toContain('data-preview-stopped');
  });

  it('one line of 2 MiB is shown in pieces, as far as they fit, with the number once', () => {
    const html = renderText('x'.repeat(2 * MiB)).value;
    expect(rows(html)).toBeGreaterThan(100);
    expect(html.match(/<span class="l">/g)?.length).toBe(1);
    expect(html).toContain('<span class="l cont">');
  });

  it('a huge table cell, transcript message or record is cut, with a note of what is left out', () => {
    const big = 'y'.repeat(PIECE_MAX_CHARS * 4);
    const csv = page('csv', 'c.csv', `a,b\n${big},1\n`, 'text/csv');
    expect(csv).toContain('more characters in the download]');
    expect(csv.length).toBeLessThan(PIECE_MAX_CHARS * 2);
    const chat = page('transcript', 't.jsonl', `${JSON.stringify({ role: 'user', content: big })}\n`);
    expect(chat).toContain('more characters in the download]');
    const records = page('transcript', 'r.jsonl', `${JSON.stringify({ k: big })}\n${JSON.stringify({ k: 1 })}\n`);
    expect(records).toContain('more characters in the download]');
    // A tool call whose arguments would fold into too much markup is shown as indented text.
    const call = {
      role: 'assistant',
      content: '',
      tool_calls: [{ function: { name: 'f', arguments: { a: Array(60_000).fill(0) } } }],
    };
    const tool = page('transcript', 'c.jsonl', `${JSON.stringify(call)}\n`);
    expect(tool).toContain('<pre class="json">');
  });

  it('JSON that would fold into more than the bound is shown as text instead', () => {
    const html = page('json', 'a.json', JSON.stringify(Array(120_000).fill(0)), 'application/json');
    expect(html).not.toContain('<details');
    expect(Buffer.byteLength(html)).toBeLessThan(PREVIEW_MAX_HTML_BYTES + FRAME);
  });
});

describe('bounded Markdown', () => {
  // Sizes whose markup is past the bound (Markdown's input limit is 2 MiB).
  it.each([
    ['a list item per line', '-\n', 1],
    ['a header per line', '#\n', 1],
    ['ampersands', '&', 1],
    ['inline code', '`a` ', 2],
  ])('%s: at most the bound, with a note, and every tag closed', (_name, unit, mebibytes) => {
    const source = unit.repeat((mebibytes * MiB) / unit.length);
    const doc = markdownDocument(source, 't').value;
    expect(Buffer.byteLength(doc)).toBeLessThan(PREVIEW_MAX_HTML_BYTES + FRAME);
    expect(doc).toContain('data-page-stopped');
    const opened = (tag: string) => doc.match(new RegExp(`<${tag}[ >]`, 'g'))?.length ?? 0;
    const closed = (tag: string) => doc.match(new RegExp(`</${tag}>`, 'g'))?.length ?? 0;
    for (const tag of ['ul', 'li', 'p', 'h1', 'code']) expect(closed(tag), tag).toBe(opened(tag));
  });

  it('stops inside a list and closes it', () => {
    // Room for the list, its first item and the second's text: the third is left out.
    const { html, stopped } = renderMarkdownWithin('- a\n- b\n- c\n', 25);
    expect(stopped).toBe(true);
    expect(html).toBe('<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n');
    expect(renderMarkdownWithin('- a\n- b\n', 1_000)).toEqual({
      html: '<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n',
      stopped: false,
    });
  });
});
