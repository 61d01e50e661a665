import {
  type ApiKeyRecord,
  type LinkRecord,
  rowMappers,
  type SessionRecord,
  type ArtifactRecord as SharedArtifactRecord,
  type PageRecord as SharedPageRecord,
  type TenantRecord as SharedTenantRecord,
  toApiKey,
  toLink,
  toSession,
} from '../shared/metadata-rows.js';

export { type ApiKeyRecord, type LinkRecord, type SessionRecord, toApiKey, toLink, toSession };

/** Rows as SQLite returns them: booleans as 0/1, metadata as JSON text. */
export type TenantRecord = SharedTenantRecord<number>;
export type ArtifactRecord = SharedArtifactRecord<string>;
export type PageRecord = SharedPageRecord<number>;

export const { toTenant, toArtifact, toPage } = rowMappers<number, string>({
  bool: (b) => b !== 0,
  metadata: (m) => JSON.parse(m) as Record<string, unknown>,
});

/**
 * The indexed form of a top-level metadata value: a string as itself, a number or boolean as its
 * JSON text; anything else (object, array, null) is not indexed and so never matches a filter.
 */
export function metadataIndexValue(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return null;
}

/**
 * Prefixed column lists for joins that return several records in one row.
 * `splitPrefixed(row, 'a_')` recovers the record whose columns were aliased with that prefix.
 */
export function prefixedColumns(alias: string, columns: readonly string[], prefix: string): string {
  return columns.map((c) => `${alias}.${c} AS ${prefix}${c}`).join(', ');
}

export function splitPrefixed<T>(row: Record<string, unknown>, prefix: string): T {
  // On every authenticated request (the key lookup): no intermediate arrays.
  const out: Record<string, unknown> = {};
  const n = prefix.length;
  for (const k in row) if (k.startsWith(prefix)) out[k.slice(n)] = row[k];
  return out as T;
}

export const TENANT_COLUMNS = ['id', 'name', 'plan', 'suspended', 'created_at', 'storage_bytes'] as const;
export const ARTIFACT_COLUMNS = [
  'id',
  'tenant_id',
  'filename',
  'content_type',
  'size_bytes',
  'content_hash',
  'metadata',
  'session_id',
  'agent_id',
  'created_at',
  'expires_at',
  'deleted_at',
  'status',
] as const;
export const API_KEY_COLUMNS = ['id', 'tenant_id', 'hash', 'last4', 'created_at', 'revoked_at'] as const;
export const LINK_COLUMNS = ['id', 'tenant_id', 'artifact_id', 'created_at', 'expires_at'] as const;
export const PAGE_COLUMNS = [
  'slug',
  'tenant_id',
  'artifact_id',
  'visibility',
  'access',
  'title',
  'password_hash',
  'live',
  'taken_down_at',
  'created_at',
  'updated_at',
] as const;
