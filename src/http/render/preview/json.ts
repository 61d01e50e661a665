import { escapeHtml, type SafeHtml, trustedHtml } from '../html.js';

/**
 * JSON, pretty-printed and foldable with `<details>` (no script). Rendered as one string built
 * from escaped pieces; nesting deeper than MAX_DEPTH is shown as compact JSON text, so a hostile
 * document cannot exhaust the stack.
 */
const MAX_DEPTH = 48;
/**
 * Folding markup is about ten times the size of the JSON (1.4 MB became 19 MB of HTML): larger
 * documents are shown pretty-printed as numbered text instead.
 */
export const FOLD_MAX_BYTES = 256 * 1024;
/** Levels opened by default; deeper objects and arrays start folded. */
const OPEN_DEPTH = 3;

function scalar(value: unknown): string {
  if (typeof value === 'string') return `<span class="s">${escapeHtml(JSON.stringify(value))}</span>`;
  if (typeof value === 'number') return `<span class="n">${escapeHtml(JSON.stringify(value))}</span>`;
  if (typeof value === 'boolean') return `<span class="b">${value}</span>`;
  return '<span class="z">null</span>';
}

/** JSON text of a value, or a placeholder for one nested too deeply to print (JSON.stringify recurses). */
export function stringifyOrNote(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent) ?? String(value);
  } catch {
    return '[nested too deeply to show; see the download]';
  }
}

function compact(value: unknown): string {
  return escapeHtml(stringifyOrNote(value));
}

/** The markup built so far, and how much more it may grow. */
class Out {
  private readonly parts: string[] = [];
  private size = 0;
  constructor(private readonly maxChars: number) {}
  push(piece: string): void {
    this.size += piece.length;
    if (this.size > this.maxChars) throw TOO_LARGE;
    this.parts.push(piece);
  }
  join(): string {
    return this.parts.join('');
  }
}
const TOO_LARGE = new Error('the folded JSON is larger than its room');

function node(value: unknown, depth: number, out: Out, key: string | null, comma: boolean): void {
  const label = key === null ? '' : `<span class="k">${escapeHtml(JSON.stringify(key))}</span>: `;
  const tail = comma ? ',' : '';
  if (value === null || typeof value !== 'object') {
    out.push(`<div>${label}${scalar(value)}${tail}</div>`);
    return;
  }
  const isArray = Array.isArray(value);
  const entries: [string | null, unknown][] = isArray
    ? (value as unknown[]).map((v) => [null, v])
    : Object.entries(value as Record<string, unknown>);
  const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) {
    out.push(`<div>${label}${open}${close}${tail}</div>`);
    return;
  }
  if (depth >= MAX_DEPTH) {
    out.push(`<div>${label}${compact(value)}${tail}</div>`);
    return;
  }
  const n = entries.length;
  const count = `${n} ${isArray ? (n === 1 ? 'item' : 'items') : n === 1 ? 'key' : 'keys'}`;
  out.push(
    `<details${depth < OPEN_DEPTH ? ' open' : ''}><summary>${label}${open} <span class="c">${count}</span></summary><div class="in">`,
  );
  entries.forEach(([k, v], i) => {
    node(v, depth + 1, out, k, i < entries.length - 1);
  });
  out.push(`</div>${close}${tail}</details>`);
}

/** The parsed value as foldable HTML. */
export function renderJsonValue(value: unknown): SafeHtml {
  return renderJsonWithin(value, Number.POSITIVE_INFINITY) as SafeHtml;
}

/** The parsed value as foldable HTML of at most `maxChars` characters, or null when it is larger. */
export function renderJsonWithin(value: unknown, maxChars: number): SafeHtml | null {
  const out = new Out(maxChars);
  try {
    node(value, 0, out, null, false);
  } catch (err) {
    if (err === TOO_LARGE) return null;
    throw err;
  }
  return trustedHtml(`<div class="json">${out.join()}</div>`);
}

/** Parses JSON text; undefined when it is not valid JSON. */
export function parseJson(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text.replace(/^\ufeff/, '')) };
  } catch {
    return undefined;
  }
}
