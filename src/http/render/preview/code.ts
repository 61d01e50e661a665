import { createRequire } from 'node:module';
import { escapeHtml, type SafeHtml } from '../html.js';
import { OutputBudget } from './budget.js';
import { Continued, eachLine, linePieces, numberedLines, renderText } from './text.js';

/**
 * Code on open pages, highlighted on the server by highlight.js (which escapes the source and adds
 * only `<span class="hljs-…">`), so the page needs no script. Diffs are coloured line by line.
 */
const LANGUAGES = [
  'bash',
  'c',
  'cpp',
  'csharp',
  'css',
  'go',
  'ini',
  'java',
  'javascript',
  'kotlin',
  'lua',
  'php',
  'python',
  'r',
  'ruby',
  'rust',
  'sql',
  'swift',
  'typescript',
  'xml',
  'yaml',
];

/** The little of highlight.js used here. */
interface Highlighter {
  registerLanguage(name: string, language: unknown): void;
  getLanguage(name: string): unknown;
  highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string };
}

// Loaded without its type declarations: they pull the DOM library into the whole program, which
// changes Node's own types (ReadableStream) everywhere else.
const require = createRequire(import.meta.url);
const hljs = require('highlight.js/lib/core') as Highlighter;
for (const name of LANGUAGES) hljs.registerLanguage(name, require(`highlight.js/lib/languages/${name}`));

/**
 * Highlighting costs about 100 times what escaping does (some seconds for 512 KiB on a busy
 * core), and a page renders on every view: beyond this, code is shown as plain numbered text.
 */
export const HIGHLIGHT_MAX_BYTES = 128 * 1024;

const TAG = /<span class="[^"<>]*">|<\/span>/g;

/**
 * Cuts highlighted HTML into lines; a span that runs over a line break (a block comment, a
 * multi-line string) is closed at the end of the line and opened again on the next.
 */
function splitHighlighted(markup: string): string[] {
  const lines: string[] = [];
  const open: string[] = [];
  for (const raw of eachLine(markup)) {
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

export function renderDiff(text: string, budget = new OutputBudget()): SafeHtml {
  function* rows(): Generator<string | Continued> {
    for (const line of eachLine(text)) {
      const cls = diffClass(line);
      let first = true;
      for (const piece of linePieces(line)) {
        const html = cls ? `<span class="${cls}">${escapeHtml(piece)}</span>` : escapeHtml(piece);
        yield first ? html : new Continued(html);
        first = false;
      }
      if (first) yield '';
    }
  }
  return numberedLines(rows(), budget);
}

export function renderCode(text: string, language: string, budget = new OutputBudget()): SafeHtml {
  if (language === 'diff') return renderDiff(text, budget);
  if (!hljs.getLanguage(language) || Buffer.byteLength(text) > HIGHLIGHT_MAX_BYTES) return renderText(text, budget);
  const { value } = hljs.highlight(text, { language, ignoreIllegals: true });
  return numberedLines(splitHighlighted(value), budget);
}
