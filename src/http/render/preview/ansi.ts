import { escapeHtml } from '../html.js';

/**
 * One line of a log as HTML: SGR colour codes (`ESC[…m`) become spans with our own classes, every
 * other escape sequence (cursor moves, OSC titles and hyperlinks, …) is dropped, and any other
 * control character is shown as its visible Control Pictures symbol (␛, ␇). Text is escaped, so
 * nothing in a log ever reaches the document as markup or reaches a terminal as a control.
 */

interface Style {
  /** One of the 16 colours, drawn with our own classes (light and dark themes). */
  fg: number | null;
  /** A colour of the 256-colour palette beyond the 16, or a true colour: `#rrggbb`. */
  fgRgb: string | null;
  bgRgb: string | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
}

const PLAIN: Style = { fg: null, fgRgb: null, bgRgb: null, bold: false, dim: false, italic: false, underline: false };

/** xterm's 16 colours, for backgrounds (which have no theme classes). */
const BASIC = [
  '#000000',
  '#cd0000',
  '#00cd00',
  '#cdcd00',
  '#0000ee',
  '#cd00cd',
  '#00cdcd',
  '#e5e5e5',
  '#7f7f7f',
  '#ff0000',
  '#00ff00',
  '#ffff00',
  '#5c5cff',
  '#ff00ff',
  '#00ffff',
  '#ffffff',
];

const hex = (n: number) =>
  Math.max(0, Math.min(255, Math.round(n)))
    .toString(16)
    .padStart(2, '0');

/** A colour of xterm's 256-colour palette: the 16, a 6x6x6 cube, then 24 greys. */
function palette256(n: number): string | null {
  if (!Number.isInteger(n) || n < 0 || n > 255) return null;
  if (n < 16) return BASIC[n] ?? null;
  if (n < 232) {
    const level = (v: number) => (v === 0 ? 0 : 55 + v * 40);
    const i = n - 16;
    return `#${hex(level(Math.floor(i / 36)))}${hex(level(Math.floor(i / 6) % 6))}${hex(level(i % 6))}`;
  }
  const grey = 8 + (n - 232) * 10;
  return `#${hex(grey)}${hex(grey)}${hex(grey)}`;
}

/** `38;2;r;g;b`'s three numbers, each 0-255, as `#rrggbb`. */
function trueColour(r: number | undefined, g: number | undefined, b: number | undefined): string | null {
  const ok = (v: number | undefined): v is number => v !== undefined && Number.isInteger(v) && v >= 0 && v <= 255;
  return ok(r) && ok(g) && ok(b) ? `#${hex(r)}${hex(g)}${hex(b)}` : null;
}

/** CSI … final byte, OSC … (BEL or ST), other two-byte escapes; C1 CSI (U+009B) too. */
const ESCAPE =
  /(?:\u001b\[|\u009b)([0-?]*)[ -/]*([@-~])|(?:\u001b\]|\u009d)[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[@-Z\\-_]/g;
/** Runs of control characters: one span for each run, not for each character. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]+/g;

function symbolOf(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? '\u2421' : '\ufffd';
}

/** A BEL (a terminal's beep) has nothing to show: it is dropped, where fonts drew ␇ as an empty box. */
function visible(text: string): string {
  return escapeHtml(text.replace(/\u0007/g, '')).replace(
    CONTROLS,
    (run) => `<span class="ctl">${Array.from(run, symbolOf).join('')}</span>`,
  );
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
    else if (c >= 30 && c <= 37) [s.fg, s.fgRgb] = [c - 30, null];
    else if (c >= 90 && c <= 97) [s.fg, s.fgRgb] = [c - 90 + 8, null];
    else if (c === 39) [s.fg, s.fgRgb] = [null, null];
    else if (c >= 40 && c <= 47) s.bgRgb = BASIC[c - 40] ?? null;
    else if (c >= 100 && c <= 107) s.bgRgb = BASIC[c - 100 + 8] ?? null;
    else if (c === 49) s.bgRgb = null;
    else if (c === 38 || c === 48) {
      // 256-colour (`;5;n`) and true colour (`;2;r;g;b`); the first 16 of the palette as foreground
      // keep our theme's classes.
      let colour: string | null = null;
      let n: number | null = null;
      if (codes[i + 1] === 5) {
        n = codes[i + 2] ?? -1;
        colour = palette256(n);
        i += 2;
      } else if (codes[i + 1] === 2) {
        colour = trueColour(codes[i + 2], codes[i + 3], codes[i + 4]);
        i += 4;
      }
      if (c === 48) s.bgRgb = colour;
      else if (n !== null && n >= 0 && n < 16) [s.fg, s.fgRgb] = [n, null];
      else [s.fg, s.fgRgb] = [null, colour];
    }
  }
  return s;
}

/** The attributes of a span in `s`: our classes, and an inline colour (built from numbers only) for the rest. */
function attributes(s: Style): string {
  const out: string[] = [];
  if (s.fg !== null) out.push(`fg${s.fg}`);
  if (s.bold) out.push('ansi-b');
  if (s.dim) out.push('ansi-d');
  if (s.italic) out.push('ansi-i');
  if (s.underline) out.push('ansi-u');
  const css = [s.fgRgb && `color:${s.fgRgb}`, s.bgRgb && `background-color:${s.bgRgb}`].filter(Boolean);
  return `${out.length > 0 ? ` class="${out.join(' ')}"` : ''}${css.length > 0 ? ` style="${css.join(';')}"` : ''}`;
}

const span = (s: Style, text: string) => {
  const attrs = attributes(s);
  return attrs ? `<span${attrs}>${visible(text)}</span>` : visible(text);
};

/** Renders one line; the style carried over from earlier lines comes in and goes out. */
const HAS_ESCAPE = /[\u001b\u009b\u009d]/;

export function ansiLine(line: string, style: Style = PLAIN): { html: string; style: Style } {
  if (!HAS_ESCAPE.test(line)) return { html: line === '' ? '' : span(style, line), style };
  let out = '';
  let current = style;
  let last = 0;
  const emit = (text: string) => {
    if (text !== '') out += span(current, text);
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
