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

/**
 * Deeper than this, a value is not handed to JSON.stringify, which recurses: a hostile document
 * nested a million levels deep made it recurse until the stack overflowed, a second of CPU per
 * call (and far more where stack traces are rewritten, as under a test runner), only to fail.
 */
const STRINGIFY_MAX_DEPTH = 1_000;

/** Whether `value` nests objects or arrays more than `limit` levels deep; an iterative walk, stopped there. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [v, depth] = next;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** JSON text of a value, or undefined for one nested too deeply to print. */
export function stringifyBounded(value: unknown, indent?: number): string | undefined {
  if (nestedDeeperThan(value, STRINGIFY_MAX_DEPTH)) return undefined;
  return JSON.stringify(value, null, indent) ?? String(value);
}

/** JSON text of a value, or a placeholder for one nested too deeply to print. */
export function stringifyOrNote(value: unknown, indent?: number): string {
  return stringifyBounded(value, indent) ?? '[nested too deeply to show; see the download]';
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
