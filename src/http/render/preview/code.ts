import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import csharp from 'highlight.js/lib/languages/csharp';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import ini from 'highlight.js/lib/languages/ini';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import kotlin from 'highlight.js/lib/languages/kotlin';
import lua from 'highlight.js/lib/languages/lua';
import php from 'highlight.js/lib/languages/php';
import python from 'highlight.js/lib/languages/python';
import r from 'highlight.js/lib/languages/r';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import swift from 'highlight.js/lib/languages/swift';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { escapeHtml, type SafeHtml } from '../html.js';
import { numberedLines, renderText, splitLines } from './text.js';

/**
 * Code on open pages, highlighted on the server by highlight.js (which escapes the source and adds
 * only `<span class="hljs-…">`), so the page needs no script. Diffs are coloured line by line.
 */
const LANGUAGES = {
  bash,
  c,
  cpp,
  csharp,
  css,
  go,
  ini,
  java,
  javascript,
  kotlin,
  lua,
  php,
  python,
  r,
  ruby,
  rust,
  sql,
  swift,
  typescript,
  xml,
  yaml,
};
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);

/** Highlighting is far slower than escaping: beyond this, code is shown as plain numbered text. */
export const HIGHLIGHT_MAX_BYTES = 512 * 1024;

const TAG = /<span class="[^"<>]*">|<\/span>/g;

/**
 * Cuts highlighted HTML into lines; a span that runs over a line break (a block comment, a
 * multi-line string) is closed at the end of the line and opened again on the next.
 */
function splitHighlighted(markup: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  for (const raw of splitLines(markup)) {
    let line = open.join('');
    let last = 0;
    TAG.lastIndex = 0;
    for (let m = TAG.exec(raw); m !== null; m = TAG.exec(raw)) {
      line += raw.slice(last, m.index) + m[0];
      last = m.index + m[0].length;
      if (m[0] === '</span>') open.pop();
      else open.push(m[0]);
    }
    line += raw.slice(last) + '</span>'.repeat(open.length);
    lines.push(line);
  }
  return lines;
}

function diffClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ') || line.startsWith('index ')) {
    return 'd-meta';
  }
  if (line.startsWith('@@')) return 'd-hunk';
  if (line.startsWith('+')) return 'd-add';
  if (line.startsWith('-')) return 'd-del';
  return '';
}

export function renderDiff(text: string): SafeHtml {
  return numberedLines(
    splitLines(text).map((line) => {
      const cls = diffClass(line);
      return cls ? `<span class="${cls}">${escapeHtml(line)}</span>` : escapeHtml(line);
    }),
  );
}

export function renderCode(text: string, language: string): SafeHtml {
  if (language === 'diff') return renderDiff(text);
  if (!hljs.getLanguage(language) || Buffer.byteLength(text) > HIGHLIGHT_MAX_BYTES) return renderText(text);
  const { value } = hljs.highlight(text, { language, ignoreIllegals: true });
  return numberedLines(splitHighlighted(value));
}
