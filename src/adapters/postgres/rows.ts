import { createHash } from 'node:crypto';
import { CairnError } from '../../core/errors.js';
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

/**
 * Rows as pg returns them: snake_case, int8 already numbers (database.ts), jsonb already parsed.
 * The same shapes come back from `to_jsonb(row)` in joins, so one mapper serves both.
 */
export interface TenantRecord {
  id: string;
  name: string;
  plan: string;
  suspended: boolean;
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
  metadata: Record<string, unknown>;
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
  live: boolean;
  taken_down_at: number | null;
  created_at: number;
  updated_at: number;
}

export const toTenant = (r: TenantRecord): TenantRow => ({
  id: r.id,
  name: r.name,
  plan: r.plan as PlanName,
  suspended: r.suspended,
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
  metadata: r.metadata,
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
  live: r.live,
  takenDownAt: r.taken_down_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
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
