import { nodeCrypto } from 'cairn-store-sdk/internal';

/**
 * Everything the CLI writes for a person (tables, records, notes, errors, progress, admin output)
 * and its JSON pass through here, because stored data reaches them: filenames, metadata, error
 * messages that quote them. Such text may hold characters a terminal acts on rather than shows:
 * C0 controls (ESC starts the sequences that recolour text, retitle the window or write the
 * clipboard, OSC 52), DEL, C1 controls (U+009B is an 8-bit CSI, U+0085 a line break), and the
 * bidirectional controls that reorder what is shown (U+202A-U+202E, U+2066-U+2069, U+200E,
 * U+200F, U+061C), besides U+2028 and U+2029, which some programs take as line breaks.
 *
 * Each is written as the escape JSON uses (`\u001b`, `\u009b`, `\u202e`; `\n`, `\r`, `\t`), so a
 * person sees what is stored and the terminal is never driven by it. JSON output stays exact
 * JSON: JSON.stringify already escapes C0 this way, and the others only occur inside strings,
 * where the same escape means the same character.
 *
 * Colour is the one thing the CLI itself asks of the terminal. `paint` (format.ts) does not write
 * escape sequences into the text, where they could not be told from stored ones: it writes marks
 * made with a random key of this process, which stored data cannot know, and only the final
 * `forTerminal` pass, after everything else is escaped, turns the marks into colour.
 */

/** Characters written as escapes. */
const ACTS_ON_TERMINAL = /[\p{Cc}\p{Bidi_Control}\u2028\u2029]/gu;
/** The same, except the line feeds the CLI puts between its own lines. */
const ACTS_ON_TERMINAL_BUT_LF = /(?!\n)[\p{Cc}\p{Bidi_Control}\u2028\u2029]/gu;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOf(char: string): string {
  return SHORT[char] ?? `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`;
}

/** `text` with every character a terminal would act on written as a visible escape, line feeds included. */
export function visible(text: string): string {
  return text.replace(ACTS_ON_TERMINAL, escapeOf);
}

/**
 * Private-use characters around the mark's key; nothing else in the CLI writes them. Made at the
 * first mark (colour is off in most runs, and a run without marks needs no random key).
 */
let marks: { key: string; pattern: RegExp } | undefined;

/** A mark standing for the SGR code `code` (ESC [ code m) until forTerminal writes it. */
export function styleMark(code: number): string {
  if (!marks) {
    const key = `\u{F3A00}${nodeCrypto().randomBytes(8).toString('hex')}`;
    marks = { key, pattern: new RegExp(`${key}(\\d+)\u{F3A01}`, 'gu') };
  }
  return `${marks.key}${code}\u{F3A01}`;
}

/**
 * Text ready for the terminal (or a pipe, a file): everything that acts on a terminal escaped
 * except line feeds, which are the CLI's own line breaks (values that might hold one are escaped
 * whole where they are laid out, see format.ts), then the colour marks of `paint` as colour.
 */
export function forTerminal(text: string): string {
  const escaped = text.replace(ACTS_ON_TERMINAL_BUT_LF, escapeOf);
  return marks ? escaped.replace(marks.pattern, (_m, code: string) => `\u001b[${code}m`) : escaped;
}

/** A line on stdout, through forTerminal. */
export function stdoutLine(text: string): void {
  process.stdout.write(`${forTerminal(text)}\n`);
}

/** A line on stderr, through forTerminal. */
export function stderrLine(text: string): void {
  process.stderr.write(`${forTerminal(text)}\n`);
}
