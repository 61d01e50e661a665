import { formatCount } from '../../../shared/units.js';
import { type SafeHtml, trustedHtml } from '../html.js';
import { type AnsiStyle, ansiLine, PLAIN_STYLE } from './ansi.js';
import { LINE_PIECE_CHARS, OutputBudget } from './budget.js';

/**
 * The lines of `text` (LF, CRLF or CR), without a phantom empty line after a final newline, one by
 * one: a renderer that stops early reads no further.
 */
export function* eachLine(text: string): Generator<string> {
  const lineBreak = /\r\n|\n|\r/g;
  let start = 0;
  for (let m = lineBreak.exec(text); m !== null; m = lineBreak.exec(text)) {
    yield text.slice(start, m.index);
    start = m.index + m[0].length;
  }
  if (start < text.length || start === 0) yield text.slice(start);
}

/** More empty lines in a row than this are shown as one line saying how many. */
const BLANK_RUN = 2;

/** A further piece of the line before it (a line longer than LINE_PIECE_CHARS): a row with no number of its own. */
export class Continued {
  constructor(readonly html: string) {}
}

/** A line longer than LINE_PIECE_CHARS, in pieces of at most that length (never inside a surrogate pair). */
export function* linePieces(line: string): Generator<string> {
  for (let at = 0; at < line.length; ) {
    let end = Math.min(line.length, at + LINE_PIECE_CHARS);
    if (end < line.length && /[\ud800-\udbff]/.test(line[end - 1] ?? '')) end--;
    yield line.slice(at, end);
    at = end;
  }
}

/**
 * Numbered lines (the numbers are CSS counters, so copying the text copies no numbers). A run of
 * more than two empty lines is one row ("⋯ 2,097,152 empty lines") that moves the counter on by as
 * many, so the numbers after it stay the file's. Rows are taken from `budget` until it is full.
 */
export function numberedLines(lines: Iterable<string | Continued>, budget = new OutputBudget()): SafeHtml {
  const out: string[] = [];
  const add = (row: string) => {
    if (!budget.take(row)) return false;
    out.push(row);
    return true;
  };
  let blank = 0;
  const flushBlank = () => {
    const run = blank;
    blank = 0;
    if (run > BLANK_RUN) {
      return add(`<span class="l gap" style="counter-increment:ln ${run}">${formatCount(run)} empty lines</span>`);
    }
    for (let i = 0; i < run; i++) if (!add('<span class="l"></span>')) return false;
    return true;
  };
  for (const line of lines) {
    if (line === '') {
      blank++;
      continue;
    }
    const row =
      line instanceof Continued ? `<span class="l cont">${line.html}</span>` : `<span class="l">${line}</span>`;
    if (!flushBlank() || !add(row)) break;
  }
  if (!budget.full) flushBlank();
  return trustedHtml(`<div class="lines">${out.join('')}</div>`);
}

/** Text and logs: wrapped monospace with line numbers; ANSI colours shown as colour. */
export function renderText(text: string, budget = new OutputBudget()): SafeHtml {
  function* rendered(): Generator<string | Continued> {
    let style: AnsiStyle = PLAIN_STYLE;
    for (const line of eachLine(text)) {
      let first = true;
      for (const piece of line.length > LINE_PIECE_CHARS ? linePieces(line) : [line]) {
        const r = ansiLine(piece, style);
        style = r.style;
        yield first ? r.html : new Continued(r.html);
        first = false;
      }
    }
  }
  return numberedLines(rendered(), budget);
}
