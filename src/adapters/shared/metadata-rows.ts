import type {
  ApiKeyRow,
  ArtifactRow,
  ArtifactStatus,
  LinkRow,
  PageRow,
  SessionRow,
  TenantRow,
} from '../../ports/metadata-store.js';
import type { PlanName } from '../../shared/plan-name.js';

/**
 * Metadata rows as both SQL adapters return them: snake_case columns, integer milliseconds. The
 * drivers differ only in how a boolean (`B`: SQLite 0/1, pg boolean) and the metadata column
 * (`M`: SQLite JSON text, pg jsonb already parsed) come back; `rowMappers` takes those two.
 */

export interface TenantRecord<B> {
  id: string;
  name: string;
  plan: string;
  suspended: B;
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

export interface ArtifactRecord<M> {
  id: string;
  tenant_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  content_hash: string;
  metadata: M;
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

export interface PageRecord<B> {
  slug: string;
  tenant_id: string;
  artifact_id: string;
  visibility: string;
  access: string;
  title: string | null;
  password_hash: string | null;
  live: B;
  taken_down_at: number | null;
  created_at: number;
  updated_at: number;
}

export const toApiKey = (r: ApiKeyRecord): ApiKeyRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  hash: r.hash,
  last4: r.last4,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
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

/** The mappers whose columns depend on the driver. */
export function rowMappers<B, M>(driver: { bool(b: B): boolean; metadata(m: M): Record<string, unknown> }) {
  return {
    toTenant: (r: TenantRecord<B>): TenantRow => ({
      id: r.id,
      name: r.name,
      plan: r.plan as PlanName,
      suspended: driver.bool(r.suspended),
      createdAt: r.created_at,
      storageBytes: r.storage_bytes,
    }),
    toArtifact: (r: ArtifactRecord<M>): ArtifactRow => ({
      id: r.id,
      tenantId: r.tenant_id,
      filename: r.filename,
      contentType: r.content_type,
      sizeBytes: r.size_bytes,
      contentHash: r.content_hash,
      metadata: driver.metadata(r.metadata),
      sessionId: r.session_id,
      agentId: r.agent_id,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
      deletedAt: r.deleted_at,
      status: r.status as ArtifactStatus,
    }),
    toPage: (r: PageRecord<B>): PageRow => ({
      slug: r.slug,
      tenantId: r.tenant_id,
      artifactId: r.artifact_id,
      visibility: r.visibility as PageRow['visibility'],
      access: r.access as PageRow['access'],
      title: r.title,
      passwordHash: r.password_hash,
      live: driver.bool(r.live),
      takenDownAt: r.taken_down_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }),
  };
}

/**
 * An artifact as the values of an `INSERT INTO artifacts (id, tenant_id, filename, content_type,
 * size_bytes, content_hash, metadata, session_id, agent_id, created_at, expires_at, deleted_at,
 * status)`, in that order, metadata as JSON text (SQLite stores it so; pg casts it to jsonb).
 */
export function artifactInsertValues(a: ArtifactRow): unknown[] {
  return [
    a.id,
    a.tenantId,
    a.filename,
    a.contentType,
    a.sizeBytes,
    a.contentHash,
    JSON.stringify(a.metadata),
    a.sessionId,
    a.agentId,
    a.createdAt,
    a.expiresAt,
    a.deletedAt,
    a.status,
  ];
}

/** `alias.column, …`: a select list naming its columns (joins, prepared statements). */
export const columnList = (alias: string, columns: readonly string[]): string =>
  columns.map((c) => `${alias}.${c}`).join(', ');

/** Column lists of the tables, in schema order: explicit select lists for joins and prepared statements. */
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
export const SESSION_COLUMNS = [
  'tenant_id',
  'session_id',
  'artifact_count',
  'sealed_at',
  'first_artifact_at',
  'last_artifact_at',
] as const;
