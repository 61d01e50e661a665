import { describe, expect, it } from 'vitest';
import { ansiLine } from '../../src/http/render/preview/ansi.js';
import { renderCode } from '../../src/http/render/preview/code.js';
import { CSV_MAX_COLUMNS, parseDelimited, renderTable } from '../../src/http/render/preview/csv.js';
import { decodePrefix, previewPage } from '../../src/http/render/preview/index.js';
import { renderJsonValue } from '../../src/http/render/preview/json.js';
import { readTranscript, renderTranscript } from '../../src/http/render/preview/transcript.js';

/** The preview renderers' edge cases; what they look like in a browser: test/browser/previews.test.ts. */

describe('ANSI', () => {
  it('keeps colour across lines until reset; 256-colour and true colour show; other escapes vanish', () => {
    const a = ansiLine('\u001b[1;31mbold red');
    expect(a.html).toBe('<span class="fg1 ansi-b">bold red</span>');
    const b = ansiLine('still\u001b[0m plain', a.style);
    expect(b.html).toBe('<span class="fg1 ansi-b">still</span> plain');
    // The first 16 of the palette keep the theme's classes; the rest of the 256, and true colour,
    // are inline colours made of numbers only.
    expect(ansiLine('\u001b[38;5;12mx\u001b[38;5;200my').html).toBe(
      '<span class="fg12">x</span><span style="color:#ff00d7">y</span>',
    );
    expect(ansiLine('\u001b[38;5;244mgrey').html).toBe('<span style="color:#808080">grey</span>');
    expect(ansiLine('\u001b[38;2;1;2;3mx').html).toBe('<span style="color:#010203">x</span>');
    expect(ansiLine('\u001b[1;38;2;255;128;0;48;5;17mx\u001b[49my\u001b[39mz').html).toBe(
      '<span class="ansi-b" style="color:#ff8000;background-color:#00005f">x</span>' +
        '<span class="ansi-b" style="color:#ff8000">y</span><span class="ansi-b">z</span>',
    );
    expect(ansiLine('\u001b[42mok').html).toBe('<span style="background-color:#00cd00">ok</span>');
    // Out of range or malformed: no colour, never markup.
    expect(ansiLine('\u001b[38;2;300;0;0mx\u001b[38;5;999my').html).toBe('xy');
    expect(ansiLine('a\u001b[2K\u001b[1Gb\u001b]0;title\u0007c\u001b]8;;https://x\u001b\\d').html).toBe('abcd');
    expect(ansiLine('\u009b31mc1').html).toBe('<span class="fg1">c1</span>');
  });

  it('shows stray controls as symbols, drops a BEL (nothing to show), and escapes markup', () => {
    expect(ansiLine('a\u0007b\u001bc\u007fd\u0085e<i>').html).toBe(
      'ab<span class="ctl">␛</span>c<span class="ctl">␡</span>d<span class="ctl">\ufffd</span>e&lt;i&gt;',
    );
  });
});

describe('CSV', () => {
  it('RFC 4180: quotes, doubled quotes, line breaks in quotes, CRLF, BOM, blank lines', () => {
    const t = parseDelimited('\ufeffa,"b ""q"""\r\n"1\n2",3\r\n\r\n4,\n', ',');
    expect(t.header).toEqual(['a', 'b "q"']);
    expect(t.rows).toEqual([
      ['1\n2', '3'],
      ['4', ''],
    ]);
    expect(t.total).toBe(2);
  });

  it('keeps the first rows, counts the rest, caps the columns', () => {
    const t = parseDelimited(`h\n${'x\n'.repeat(50)}`, ',', 10);
    expect(t.rows).toHaveLength(10);
    expect(t.total).toBe(50);
    const wide = renderTable(parseDelimited(`${','.repeat(5_000)}\n`, ',')).value;
    expect(wide.match(/<th>/g)).toHaveLength(CSV_MAX_COLUMNS);
  });
});

describe('code', () => {
  it('a span over several lines is closed and reopened on each', () => {
    const html = renderCode('/* one\ntwo */ x', 'javascript').value;
    expect(html).toContain('<span class="l"><span class="hljs-comment">/* one</span></span>');
    expect(html).toContain('<span class="l"><span class="hljs-comment">two */</span> x</span>');
  });

  it('an unknown language is plain text', () => {
    expect(renderCode('<b>', 'klingon').value).toBe('<div class="lines"><span class="l">&lt;b&gt;</span></div>');
  });
});

describe('JSON', () => {
  it('nesting beyond the depth limit is shown compact; a 2 MB nest neither throws nor overflows', () => {
    let v: unknown = 'leaf';
    for (let i = 0; i < 60; i++) v = [v];
    expect(renderJsonValue(v).value).toContain('[[[[[[[[[[[[&quot;leaf&quot;]]]]]]]]]]]]');
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
    const page = previewPage({
      kind: 'json',
      title: 't',
      filename: 'd.json',
      contentType: 'application/json',
      bytes: Buffer.from(deep),
      sizeBytes: deep.length,
    }).value;
    expect(page).toContain('<main>');
    expect(page).toContain('<span class="l">[[[[');
  });
});

describe('transcripts', () => {
  it('recognised when at least half the records are turns; otherwise null', () => {
    const turn = JSON.stringify({ role: 'user', content: 'hi' });
    expect(readTranscript(`${turn}\n{"x":1}\n`)).not.toBeNull();
    expect(readTranscript(`${turn}\n{"x":1}\n{"y":2}\n`)).toBeNull();
    expect(readTranscript('{"x":1}\n')).toBeNull();
    expect(readTranscript(JSON.stringify({ messages: [{ role: 'assistant', content: 'a' }] }))).toHaveLength(1);
  });

  it('a transcript with no JSON line at all (plain text) is shown as numbered text', () => {
    expect(renderTranscript('User: hi\nAssistant: hello\n').value).toBe(
      '<div class="lines"><span class="l">User: hi</span><span class="l">Assistant: hello</span></div>',
    );
    expect(renderTranscript('{"a":1}\nnot json\n').value).toContain('<div class="records">');
  });
});

describe('hostile nesting in every kind that parses JSON', () => {
  const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
  const message = (content: string) => JSON.stringify({ role: 'user', content: 'x' }).replace('"x"', content);
  it.each([
    ['json', 'd.json', deep],
    ['transcript', 'd.ndjson', `${deep}\n`],
    ['transcript', 'e.ndjson', `${message(deep)}\n`],
    ['transcript', 'f.ndjson', `${JSON.stringify({ role: 'user', content: 'hi' })}\n${deep}\n`],
  ])('%s %s renders without throwing', (kind, filename, text) => {
    const page = previewPage({
      kind: kind as 'json',
      title: 't',
      filename,
      contentType: 'application/json',
      bytes: Buffer.from(text),
      sizeBytes: text.length,
    }).value;
    expect(page).toContain('</main>');
  });
});

describe('prefix decoding', () => {
  it('drops a multi-byte character cut at the end, keeps a whole one', () => {
    const euro = Buffer.from('a€');
    expect(decodePrefix(euro.subarray(0, 3), true)).toBe('a');
    expect(decodePrefix(euro.subarray(0, 2), true)).toBe('a');
    expect(decodePrefix(euro, true)).toBe('a€');
    const emoji = Buffer.from('😀');
    for (let n = 1; n < 4; n++) expect(decodePrefix(emoji.subarray(0, n), true)).toBe('');
    expect(decodePrefix(emoji, true)).toBe('😀');
  });
});
