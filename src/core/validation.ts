import { decodeBase64Text } from '../shared/base64.js';
import { forEachEntry, holdsUnstorableText, isStorableText, UNSTORABLE_METADATA } from '../shared/storable-text.js';
import { isValidContentType } from './content-type.js';
import { invalid } from './errors.js';
import { LABEL } from './ids.js';
import { refuseDuplicateKeys } from './json-text.js';
import { LIMITS } from './plans.js';

export const METADATA_KEY = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;

/**
 * Control characters: C0, DEL and C1 (U+0080-U+009F). A terminal acts on any of them (ESC and
 * the 8-bit CSI U+009B start escape sequences, U+0085 breaks a line), so names and labels that
 * people see in listings never hold one.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A filename as a person would type it: no path, no control characters, at most 255 bytes. */
export function checkFilename(name: unknown, field = 'filename'): string {
  if (typeof name !== 'string' || name.trim() === '')
    throw invalid(`${field} is required and must be a non-empty string.`);
  if (Buffer.byteLength(name, 'utf8') > 255) throw invalid(`${field} must be at most 255 bytes.`);
  refuseControls(name, field);
  refuseUnstorableText(name, field);
  if (/[/\\]/.test(name)) throw invalid(`${field} must be a bare file name, without '/' or '\\'.`);
  if (name === '.' || name === '..') throw invalid(`${field} must be a file name.`);
  return name;
}

/** The one control-character rule of stored names and labels (filenames, session and agent ids). */
function refuseControls(value: string, field: string): void {
  if (CONTROL.test(value)) throw invalid(`${field} must not contain control characters (C0, DEL or C1).`);
}

/**
 * The one rule for the text of every field Cairn stores (filenames, page titles and passwords,
 * OAuth client names; metadata strings by checkMetadata): Unicode text, so no U+0000 and no half
 * of a surrogate pair (JSON's `"\ud800"`). Each backend would otherwise do something else with
 * it (SQLite keeps a U+FFFD, PostgreSQL refuses it), and two such passwords would hash alike.
 */
export function refuseUnstorableText(value: string, field: string): void {
  if (!isStorableText(value)) {
    throw invalid(`${field} must be Unicode text: no U+0000 and no unpaired surrogate (such as "\\ud800").`);
  }
}

export function checkLabel(value: unknown, field: 'session_id' | 'agent_id'): string {
  // The label pattern is ASCII and already leaves controls out; the rule is stated on its own so
  // that it holds, with its own message, whatever the pattern becomes.
  if (typeof value === 'string') refuseControls(value, field);
  if (typeof value !== 'string' || !LABEL.test(value)) {
    throw invalid(`${field} must match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$.`);
  }
  return value;
}

export function optionalLabel(value: unknown, field: 'session_id' | 'agent_id'): string | null {
  if (value === undefined || value === null || value === '') return null;
  return checkLabel(value, field);
}

export function checkContentType(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !isValidContentType(value.trim())) {
    throw invalid('content_type must be a MIME type such as text/markdown.');
  }
  const [type = '', ...params] = value.trim().split(';');
  return [type.trim().toLowerCase(), ...params.map((p) => p.trim())].join('; ');
}

/**
 * A JSON object of at most 8 KB and 32 levels, with keys of the spec's pattern, and no string
 * (key or value, at any depth) holding U+0000 or an unpaired surrogate: PostgreSQL can store
 * neither, so no backend takes them.
 */
export function checkMetadata(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('metadata must be a JSON object.');
  // Before anything recursive: JSON.stringify of a value nested thousands deep overflows the stack.
  checkNestingAndText(value);
  for (const key of Object.keys(value)) {
    if (!METADATA_KEY.test(key)) {
      throw invalid(`metadata key '${key.slice(0, 80)}' must match ^[a-zA-Z][a-zA-Z0-9_-]{0,63}$ (no dots).`);
    }
  }
  const size = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (size > LIMITS.metadataBytes) throw invalid(`metadata is ${size} bytes; the limit is 8192 bytes of JSON.`);
  return value as Record<string, unknown>;
}

/** Refuses nesting past the cap, then strings no backend can store (both walks never recurse). */
function checkNestingAndText(root: object): void {
  forEachEntry(root, (_, child, depth) => {
    if (typeof child === 'object' && child !== null && depth + 1 > LIMITS.metadataDepth) {
      throw invalid(`metadata nests objects and arrays more than ${LIMITS.metadataDepth} levels deep.`);
    }
  });
  if (holdsUnstorableText(root)) throw invalid(UNSTORABLE_METADATA);
}

/** Parses metadata sent as a JSON string (multipart form field). */
export function parseMetadataField(text: string | undefined): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('metadata must be a JSON object encoded as a string.');
  }
  refuseDuplicateKeys(text, 'metadata');
  return checkMetadata(parsed);
}

/** The API's base64 `content`, decoded (decodeBase64Text's rule, src/shared/base64.ts). */
export function decodeBase64(content: unknown): Buffer {
  if (typeof content !== 'string') throw invalid('content must be a base64 string.');
  const bytes = decodeBase64Text(content);
  if (bytes === null) {
    throw invalid(
      'content is not valid base64: the standard alphabet (A-Z a-z 0-9 + /), padding optional, line breaks allowed, no spaces.',
    );
  }
  return bytes;
}

export function parseBooleanFlag(value: unknown, field: string): boolean {
  if (value === undefined || value === null || value === '' || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw invalid(`${field} must be true or false.`);
}

/**
 * The first `max` characters (code points) of `text`: never cuts a surrogate pair in two, which
 * `slice` on UTF-16 units would, leaving a lone half that is not valid Unicode.
 */
export function truncateCodePoints(text: string, max: number): string {
  // Each code point is one or two units, so a text of at most `max` units is short enough.
  if (text.length <= max) return text;
  let out = '';
  let count = 0;
  for (const char of text) {
    if (count++ === max) break;
    out += char;
  }
  return out;
}
