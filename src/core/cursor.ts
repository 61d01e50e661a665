import { invalid } from './errors.js';

/**
 * Opaque keyset cursors: base64url JSON of the last row's sort key. Opaque to clients so the
 * ordering columns can change without breaking them; validated strictly on the way back in.
 */
export function encodeCursor(parts: [number, string]): string {
  return Buffer.from(JSON.stringify(parts)).toString('base64url');
}

export function decodeCursor(cursor: string, idPattern: RegExp): [number, string] {
  try {
    if (!/^[A-Za-z0-9_-]{1,512}$/.test(cursor)) throw new Error('shape');
    const parts: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(parts) &&
      parts.length === 2 &&
      Number.isSafeInteger(parts[0]) &&
      typeof parts[1] === 'string' &&
      idPattern.test(parts[1])
    ) {
      return [parts[0] as number, parts[1]];
    }
  } catch {
    // fall through to the one error below
  }
  throw invalid('cursor is malformed; pass back next_cursor exactly as received.');
}
