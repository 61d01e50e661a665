import type { IncomingHttpHeaders } from 'node:http';
import { invalid } from '../../core/errors.js';
import { refuseDuplicateKeys } from '../../core/json-text.js';
import type { UploadRequest } from '../../core/upload.js';
import {
  isUploadWireField,
  UPLOAD_WIRE_NAMES,
  type UploadWireField,
  uploadRequestFrom,
  type WireUploadFields,
} from '../../core/upload-request.js';

/** The tus version this endpoint speaks (the only one there is). */
export const TUS_VERSION = '1.0.0';

/** A header's one value (a repeated header counts as its first). */
export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * `Upload-Length` / `Upload-Offset`: a whole number of bytes in plain decimal, with no sign and no
 * leading zero (`00010` is refused, not read as 10: a reader of the other kind would see 8 or an
 * error); undefined when absent.
 */
export function byteCount(headers: IncomingHttpHeaders, name: string): number | undefined {
  const v = headerValue(headers, name.toLowerCase());
  if (v === undefined) return undefined;
  if (!/^(?:0|[1-9]\d{0,15})$/.test(v.trim())) {
    throw invalid(
      `${name} must be a whole number of bytes written without a sign or leading zeros, e.g. "${name}: 1048576".`,
    );
  }
  return Number(v.trim());
}

/** Upload-Metadata keys are the upload fields' wire names; other tus clients' names are aliases. */
const ALIASES: Record<string, UploadWireField> = {
  name: 'filename', // Uppy
  filetype: 'content_type', // tus-js-client's examples
  type: 'content_type', // Uppy
};
/** The keys, as a refusal lists them: "filename, …, metadata (a JSON object) or transcript". */
const KNOWN_KEYS = (() => {
  const names = UPLOAD_WIRE_NAMES.map((n) => (n === 'metadata' ? 'metadata (a JSON object)' : n));
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
})();
/** Sent by Uppy for every file; says nothing Cairn keeps. */
const IGNORED = new Set(['relativePath']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * `Upload-Metadata: filename cmVwb3J0Lm1k,session_id cnVuLTQy,…`: comma-separated pairs of a key
 * and the base64 of its value (tus 1.0.0). `metadata` holds a JSON object as text. Unknown keys
 * are refused, so a misspelt field fails loudly instead of being dropped.
 */
export function parseUploadMetadata(header: string | undefined): UploadRequest {
  const fields: WireUploadFields = {};
  if (header === undefined || header.trim() === '') return {};
  const seen = new Set<string>();
  for (const pair of header.split(',')) {
    const [key = '', encoded = '', ...extra] = pair.trim().split(' ');
    if (key === '' || extra.length > 0 || !BASE64.test(encoded) || encoded.length % 4 !== 0) {
      throw invalid('Upload-Metadata must be comma-separated "key base64value" pairs, e.g. "filename cmVwb3J0Lm1k".');
    }
    if (seen.has(key)) throw invalid(`Upload-Metadata names ${key} twice.`);
    seen.add(key);
    if (IGNORED.has(key)) continue;
    // Own keys only: `constructor` or `__proto__` are no field names.
    const field = isUploadWireField(key) ? key : Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
    if (!field) {
      throw invalid(`Upload-Metadata key ${key} is not known; use ${KNOWN_KEYS}.`);
    }
    const text = utf8Text(Buffer.from(encoded, 'base64'), key);
    if (fields[field] !== undefined) throw invalid(`Upload-Metadata gives ${key} and another name for the same field.`);
    fields[field] = field === 'metadata' ? parseJsonObject(text) : text;
  }
  return uploadRequestFrom(fields);
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A value's bytes as text: UTF-8, refused (not patched with U+FFFD) when they are not. */
function utf8Text(bytes: Buffer, key: string): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw invalid(`Upload-Metadata ${key} is not UTF-8 text.`);
  }
}

function parseJsonObject(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid('Upload-Metadata metadata must be a JSON object (base64 of its text), e.g. {"model":"gpt-5"}.');
  }
  refuseDuplicateKeys(text, 'Upload-Metadata metadata');
  return value;
}
