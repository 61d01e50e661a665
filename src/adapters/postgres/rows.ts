import { createHash } from 'node:crypto';
import { CairnError } from '../../shared/cairn-error.js';
import {
  type ApiKeyRecord,
  ARTIFACT_COLUMNS,
  columnList,
  type LinkRecord,
  rowMappers,
  SESSION_COLUMNS,
  type SessionRecord,
  type ArtifactRecord as SharedArtifactRecord,
  type PageRecord as SharedPageRecord,
  type TenantRecord as SharedTenantRecord,
  TENANT_COLUMNS,
  toApiKey,
  toLink,
  toSession,
} from '../shared/metadata-rows.js';

export { type ApiKeyRecord, type LinkRecord, type SessionRecord, toApiKey, toLink, toSession };

/** Named select lists (never `*`: see `prepared`): the artifact columns of `artifacts AS a`, … */
export const ARTIFACT_SELECT = columnList('a', ARTIFACT_COLUMNS);
/** …the columns of `sessions` and of `tenants`, unqualified. */
export const SESSION_SELECT = SESSION_COLUMNS.join(', ');
export const TENANT_SELECT = TENANT_COLUMNS.join(', ');

/**
 * Rows as pg returns them: int8 already numbers (database.ts), jsonb already parsed. The same
 * shapes come back from `to_jsonb(row)` in joins, so one mapper serves both.
 */
export type TenantRecord = SharedTenantRecord<boolean>;
export type ArtifactRecord = SharedArtifactRecord<Record<string, unknown>>;
export type PageRecord = SharedPageRecord<boolean>;

export const { toTenant, toArtifact, toPage } = rowMappers<boolean, Record<string, unknown>>({
  bool: (b) => b,
  metadata: (m) => m,
});

/** Values longer than this are indexed by digest: a B-tree entry must stay under ~2.7 KB. */
const MAX_INLINE_VALUE_BYTES = 256;

/**
 * The indexed form of a top-level metadata value, the same rule as the SQLite adapter: a string
 * as itself, a number or boolean as its JSON text; anything else is not indexed and never matches.
 * Long values are replaced by a digest, applied alike to stored values and filter values.
 */
export function metadataIndexValue(value: unknown): string | null {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = JSON.stringify(value);
  else if (typeof value === 'boolean') text = value ? 'true' : 'false';
  else return null;
  return metadataMatchValue(text);
}

export function metadataMatchValue(text: string): string {
  if (Buffer.byteLength(text, 'utf8') <= MAX_INLINE_VALUE_BYTES) return text;
  return `\u0001sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** U+0000 and lone surrogates: valid in a JS string and in JSON text, refused by PostgreSQL text and jsonb. */
const UNSTORABLE = /\u0000|\p{Cs}/u;

/**
 * Refuses metadata PostgreSQL cannot store as `invalid_request` (a client error) rather than
 * letting the insert fail as a server error.
 */
export function assertStorableMetadata(metadata: unknown): void {
  const visit = (v: unknown): boolean => {
    if (typeof v === 'string') return !UNSTORABLE.test(v);
    if (Array.isArray(v)) return v.every(visit);
    if (v !== null && typeof v === 'object') {
      return Object.entries(v).every(([k, inner]) => !UNSTORABLE.test(k) && visit(inner));
    }
    return true;
  };
  if (!visit(metadata)) {
    throw new CairnError('invalid_request', 'metadata strings must not contain U+0000 or unpaired surrogates.');
  }
}
