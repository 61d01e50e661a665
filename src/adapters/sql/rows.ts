import { createHash } from 'node:crypto';
import type {
  ApiKeyRow,
  ArtifactRow,
  LinkRow,
  PageRow,
  SessionLinkRow,
  SessionRow,
  TenantRow,
} from '../../ports/metadata-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import { holdsUnstorableText, UNSTORABLE_METADATA } from '../../shared/storable-text.js';
import type { Dialect } from './dialect.js';
import { table } from './table.js';

/**
 * The metadata tables as rows (src/ports/metadata-records.ts): snake_case columns in schema
 * order, integer milliseconds (pg's int8 is read as a number, see postgres/database.ts).
 */

export const TENANTS = table<TenantRow>()('tenants', 'id name plan suspended created_at storage_bytes', {
  suspended: 'bool',
});

export const API_KEYS = table<ApiKeyRow>()('api_keys', 'id tenant_id hash last4 created_at revoked_at');

export const ARTIFACTS = table<ArtifactRow>()(
  'artifacts',
  'id tenant_id filename content_type size_bytes content_hash metadata session_id agent_id created_at expires_at deleted_at status',
  { metadata: 'json' },
);

export const SESSIONS = table<SessionRow>()(
  'sessions',
  'tenant_id session_id artifact_count sealed_at first_artifact_at last_artifact_at',
);

export const LINKS = table<LinkRow>()('links', 'id tenant_id artifact_id created_at expires_at revoked_at');

export const SESSION_LINKS = table<SessionLinkRow>()(
  'session_links',
  'id tenant_id session_id created_at expires_at revoked_at',
);

export const PAGES = table<PageRow>()(
  'pages',
  'slug tenant_id artifact_id visibility access title password_hash live taken_down_at created_at updated_at',
  { live: 'bool' },
);

/**
 * Rows for a `jsonRows` parameter: entries with equal leading fields summed into one (their last
 * field), in key order, the order PostgreSQL then takes their row locks in, so writers queue
 * rather than deadlock.
 */
export function summed<T extends [string, string, number] | [string, number]>(entries: T[]): T[] {
  const sums = new Map<string, T>();
  for (const entry of entries) {
    const key = entry.slice(0, -1).join('\u0000');
    const sum = sums.get(key);
    if (sum) sum[sum.length - 1] = (sum.at(-1) as number) + (entry.at(-1) as number);
    else sums.set(key, [...entry] as T);
  }
  return [...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, sum]) => sum);
}

/** Values longer than this are indexed by digest where the dialect asks for it (see Dialect). */
const MAX_INLINE_VALUE_BYTES = 256;

/**
 * The indexed form of a top-level metadata value: a string as itself, a number or boolean as its
 * JSON text; anything else (object, array, null) is not indexed and so never matches a filter.
 */
export function metadataIndexValue(d: Dialect, value: unknown): string | null {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = JSON.stringify(value);
  else if (typeof value === 'boolean') text = value ? 'true' : 'false';
  else return null;
  return metadataMatchValue(d, text);
}

/** A filter's value as the index holds it (long values by digest, applied alike to stored values). */
export function metadataMatchValue(d: Dialect, text: string): string {
  if (!d.digestsLongMetadata || Buffer.byteLength(text, 'utf8') <= MAX_INLINE_VALUE_BYTES) return text;
  return `\u0001sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/**
 * Refuses metadata PostgreSQL cannot store (see storable-text.ts) as `invalid_request`, a client
 * error, rather than a failed insert. The core refuses it before any byte is stored; this keeps
 * the port's rule for any other caller.
 */
export function assertStorableMetadata(metadata: Record<string, unknown>): void {
  if (holdsUnstorableText(metadata)) throw new CairnError('invalid_request', UNSTORABLE_METADATA);
}
