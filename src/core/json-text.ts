import { invalid } from './errors.js';

/**
 * JSON text as Cairn reads it: `JSON.parse` keeps the last of two equal keys in one object,
 * silently, while another reader of the same bytes (a proxy, a log pipeline, the sender's own
 * checks) may keep the first. So a body naming a key twice is refused (I-JSON, RFC 7493 §2.3).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** The index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let at = start;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/**
 * The first key named twice in one object of `text`, compared as decoded (`"a"` and `"\u0061"`
 * are the same key), or null. `text` must already be valid JSON (parse it first): this only walks
 * its strings and brackets, one pass, no recursion, so any nesting is safe.
 */
export function firstDuplicateKey(text: string): string | null {
  // One entry per open object (the keys seen so far) or array (null).
  const open: (Set<string> | null)[] = [];
  let expectingKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const keys = open[open.length - 1];
      if (keys && expectingKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (keys.has(key)) return key;
        keys.add(key);
        expectingKey = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT) {
      open.push(new Set());
      expectingKey = true;
    } else if (c === OPEN_ARRAY) {
      open.push(null);
      expectingKey = false;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      open.pop();
      expectingKey = false;
    } else if (c === COMMA) {
      expectingKey = Boolean(open[open.length - 1]);
    }
  }
  return null;
}

/** Refuses (`invalid_request`) a JSON text that names a key twice in one object; `where` names the text. */
export function refuseDuplicateKeys(text: string, where: string): void {
  const key = firstDuplicateKey(text);
  if (key !== null) {
    throw invalid(
      `${where} names the key ${JSON.stringify(key.slice(0, 80))} twice in one object; send each key once.`,
    );
  }
}
