import { formatCount } from '../../../shared/units.js';

/** Previews read at most this much of a file; the rest is in the download. */
export const PREVIEW_MAX_BYTES = 2 * 1024 * 1024;

/**
 * How much HTML one preview may be. Escaping and markup make a preview larger than its text (a
 * line break became a 23-byte row, a control character a 27-byte span), so a bound on the input
 * alone let 2 MiB of newlines become 48 MB of HTML: the output has its own bound. Past it, the
 * preview stops and says the rest is in the download.
 */
export const PREVIEW_MAX_HTML_BYTES = 4 * 1024 * 1024;
/** Lines (or table rows, transcript turns, records) shown at most; a browser lays out each one. */
export const PREVIEW_MAX_ROWS = 50_000;

/**
 * One piece of text (a transcript's message, a record, a table cell) shows at most this many
 * characters, so that one huge piece cannot take the whole preview; a text line longer than
 * LINE_PIECE_CHARS is shown in pieces of that length, as many as fit.
 */
export const PIECE_MAX_CHARS = 64 * 1024;
export const LINE_PIECE_CHARS = 16 * 1024;

/** `text`, cut to PIECE_MAX_CHARS (never inside a surrogate pair) with a note of what was left out. */
export function clip(text: string, max = PIECE_MAX_CHARS): string {
  if (text.length <= max) return text;
  const cut = /[\ud800-\udbff]/.test(text[max - 1] ?? '') ? max - 1 : max;
  return `${text.slice(0, cut)}… [${formatCount(text.length - cut)} more characters in the download]`;
}

/** The room left in one preview, taken piece by piece as the renderer builds it. */
export class OutputBudget {
  private bytes = 0;
  private rows = 0;
  /** Set once a piece did not fit: the preview stops there, and nothing more is taken. */
  full = false;

  constructor(
    readonly maxBytes = PREVIEW_MAX_HTML_BYTES,
    readonly maxRows = PREVIEW_MAX_ROWS,
  ) {}

  /** Takes `html` as `rows` more rows when both fit, else false (and the budget is full). */
  take(html: string, rows = 1): boolean {
    if (this.full) return false;
    const size = Buffer.byteLength(html);
    if (this.bytes + size > this.maxBytes || this.rows + rows > this.maxRows) {
      this.full = true;
      return false;
    }
    this.bytes += size;
    this.rows += rows;
    return true;
  }

  /** Takes `html` when it fits; when it does not, takes nothing and leaves room for something smaller. */
  takeWhole(html: string): boolean {
    if (this.full || this.bytes + Buffer.byteLength(html) > this.maxBytes) return false;
    return this.take(html);
  }

  /** Bytes still free. */
  get bytesLeft(): number {
    return this.maxBytes - this.bytes;
  }
}
