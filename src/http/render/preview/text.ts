import { type SafeHtml, trustedHtml } from '../html.js';
import { type AnsiStyle, ansiLine, PLAIN_STYLE } from './ansi.js';

/** Splits text into lines (LF, CRLF or CR), without a phantom empty line after a final newline. */
export function splitLines(text: string): string[] {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Numbered lines (the numbers are CSS counters, so copying the text copies no numbers). */
export function numberedLines(lines: readonly string[]): SafeHtml {
  return trustedHtml(`<div class="lines">${lines.map((l) => `<span class="l">${l}</span>`).join('')}</div>`);
}

/** Text and logs: wrapped monospace with line numbers; ANSI colours shown as colour. */
export function renderText(text: string): SafeHtml {
  let style: AnsiStyle = PLAIN_STYLE;
  const out: string[] = [];
  for (const line of splitLines(text)) {
    const r = ansiLine(line, style);
    style = r.style;
    out.push(r.html);
  }
  return numberedLines(out);
}
