import type { PlanName } from '../../core/plans.js';
import type {
  ApiKeyRow,
  ArtifactRow,
  ArtifactStatus,
  LinkRow,
  PageRow,
  SessionRow,
  TenantRow,
} from '../../ports/metadata-store.js';

/** Rows as SQLite returns them: snake_case, booleans as 0/1, metadata as JSON text. */
export interface TenantRecord {
  id: string;
  name: string;
  plan: string;
  suspended: number;
  created_at: number;
  storage_bytes: number;
}

export interface ApiKeyRecord {
  id: string;
  tenant_id: string;
  hash: string;
  last4: string;
  created_at: number;
  revoked_at: number | null;
}

export interface ArtifactRecord {
  id: string;
  tenant_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  content_hash: string;
  metadata: string;
  session_id: string | null;
  agent_id: string | null;
  created_at: number;
  expires_at: number | null;
  deleted_at: number | null;
  status: string;
}

export interface SessionRecord {
  tenant_id: string;
  session_id: string;
  artifact_count: number;
  sealed_at: number | null;
  first_artifact_at: number;
  last_artifact_at: number;
}

export interface LinkRecord {
  id: string;
  tenant_id: string;
  artifact_id: string;
  created_at: number;
  expires_at: number;
}

export interface PageRecord {
  slug: string;
  tenant_id: string;
  artifact_id: string;
  visibility: string;
  access: string;
  title: string | null;
  password_hash: string | null;
  live: number;
  taken_down_at: number | null;
  created_at: number;
  updated_at: number;
}

export const toTenant = (r: TenantRecord): TenantRow => ({
  id: r.id,
  name: r.name,
  plan: r.plan as PlanName,
  suspended: r.suspended !== 0,
  createdAt: r.created_at,
  storageBytes: r.storage_bytes,
});

export const toApiKey = (r: ApiKeyRecord): ApiKeyRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  hash: r.hash,
  last4: r.last4,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export const toArtifact = (r: ArtifactRecord): ArtifactRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  filename: r.filename,
  contentType: r.content_type,
  sizeBytes: r.size_bytes,
  contentHash: r.content_hash,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  sessionId: r.session_id,
  agentId: r.agent_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  deletedAt: r.deleted_at,
  status: r.status as ArtifactStatus,
});

export const toSession = (r: SessionRecord): SessionRow => ({
  tenantId: r.tenant_id,
  sessionId: r.session_id,
  artifactCount: r.artifact_count,
  sealedAt: r.sealed_at,
  firstArtifactAt: r.first_artifact_at,
  lastArtifactAt: r.last_artifact_at,
});

export const toLink = (r: LinkRecord): LinkRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  artifactId: r.artifact_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

export const toPage = (r: PageRecord): PageRow => ({
  slug: r.slug,
  tenantId: r.tenant_id,
  artifactId: r.artifact_id,
  visibility: r.visibility as PageRow['visibility'],
  access: r.access as PageRow['access'],
  title: r.title,
  passwordHash: r.password_hash,
  live: r.live !== 0,
  takenDownAt: r.taken_down_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
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
