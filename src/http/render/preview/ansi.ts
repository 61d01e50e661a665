import { escapeHtml } from '../html.js';

/**
 * One line of a log as HTML: SGR colour codes (`ESC[…m`) become spans with our own classes, every
 * other escape sequence (cursor moves, OSC titles and hyperlinks, …) is dropped, and any other
 * control character is shown as its visible Control Pictures symbol (␛, ␇). Text is escaped, so
 * nothing in a log ever reaches the document as markup or reaches a terminal as a control.
 */

interface Style {
  fg: number | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
}

const PLAIN: Style = { fg: null, bold: false, dim: false, italic: false, underline: false };

/** CSI … final byte, OSC … (BEL or ST), other two-byte escapes; C1 CSI (U+009B) too. */
const ESCAPE =
  /(?:\u001b\[|\u009b)([0-?]*)[ -/]*([@-~])|(?:\u001b\]|\u009d)[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[@-Z\\-_]/g;
/** Runs of control characters: one span for each run, not for each character. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]+/g;

function symbolOf(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? '\u2421' : '\ufffd';
}

function visible(text: string): string {
  return escapeHtml(text).replace(CONTROLS, (run) => `<span class="ctl">${Array.from(run, symbolOf).join('')}</span>`);
}

function apply(style: Style, params: string): Style {
  const codes = params === '' ? [0] : params.split(';').map((p) => (p === '' ? 0 : Number(p)));
  let s = { ...style };
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i] as number;
    if (c === 0) s = { ...PLAIN };
    else if (c === 1) s.bold = true;
    else if (c === 2) s.dim = true;
    else if (c === 3) s.italic = true;
    else if (c === 4) s.underline = true;
    else if (c === 22) s.bold = s.dim = false;
    else if (c === 23) s.italic = false;
    else if (c === 24) s.underline = false;
    else if (c >= 30 && c <= 37) s.fg = c - 30;
    else if (c >= 90 && c <= 97) s.fg = c - 90 + 8;
    else if (c === 39) s.fg = null;
    else if (c === 38 || c === 48) {
      // 256-colour and true-colour: the first 16 of the palette map to ours, the rest is dropped.
      if (codes[i + 1] === 5) {
        const n = codes[i + 2] ?? -1;
        if (c === 38) s.fg = n >= 0 && n < 16 ? n : null;
        i += 2;
      } else if (codes[i + 1] === 2) i += 4;
    }
  }
  return s;
}

function classes(s: Style): string {
  const out: string[] = [];
  if (s.fg !== null) out.push(`fg${s.fg}`);
  if (s.bold) out.push('ansi-b');
  if (s.dim) out.push('ansi-d');
  if (s.italic) out.push('ansi-i');
  if (s.underline) out.push('ansi-u');
  return out.join(' ');
}

/** Renders one line; the style carried over from earlier lines comes in and goes out. */
const HAS_ESCAPE = /[\u001b\u009b\u009d]/;

export function ansiLine(line: string, style: Style = PLAIN): { html: string; style: Style } {
  if (!HAS_ESCAPE.test(line)) {
    const cls = classes(style);
    return { html: line === '' ? '' : cls ? `<span class="${cls}">${visible(line)}</span>` : visible(line), style };
  }
  let out = '';
  let current = style;
  let last = 0;
  const emit = (text: string) => {
    if (text === '') return;
    const cls = classes(current);
    out += cls ? `<span class="${cls}">${visible(text)}</span>` : visible(text);
  };
  ESCAPE.lastIndex = 0;
  for (let m = ESCAPE.exec(line); m !== null; m = ESCAPE.exec(line)) {
    emit(line.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] === 'm') current = apply(current, m[1] ?? '');
  }
  emit(line.slice(last));
  return { html: out, style: current };
}

export { PLAIN as PLAIN_STYLE, type Style as AnsiStyle };
