/**
 * U+0000 and lone surrogates: valid in a JS string and in JSON text, refused by PostgreSQL text
 * and jsonb. No backend takes them, so an artifact's fate does not depend on where it is kept.
 */
const UNSTORABLE = /\u0000|\p{Cs}/u;

export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);

export const UNSTORABLE_METADATA = 'metadata strings must not contain U+0000 or unpaired surrogates.';

/**
 * Calls `visit` with every key and value inside a JSON value's objects and arrays (an array's
 * indexes as keys) and the depth of the object holding them (1 for the root). An explicit stack,
 * never recursion, so any nesting is safe to walk.
 */
export function forEachEntry(root: object, visit: (key: string, child: unknown, depth: number) => void): void {
  const pending: [object, number][] = [[root, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    for (const [key, child] of Object.entries(node)) {
      visit(key, child, depth);
      if (typeof child === 'object' && child !== null) pending.push([child, depth + 1]);
    }
  }
}

/** Whether a key or string value anywhere inside `root` is one no backend can store. */
export function holdsUnstorableText(root: object): boolean {
  let found = false;
  forEachEntry(root, (key, child) => {
    if (!isStorableText(key) || (typeof child === 'string' && !isStorableText(child))) found = true;
  });
  return found;
}
