import type { PlanName } from '../shared/plan-name.js';

/**
 * The rows the metadata ports read and write (tenant-store, artifact-store, sharing-store,
 * sweeper-store). One module because the aggregates refer to each other's rows: a link or a page
 * is read with its artifact and tenant, an artifact with its page.
 */

export interface TenantRow {
  id: string;
  name: string;
  plan: PlanName;
  suspended: boolean;
  createdAt: number;
  /** Sum of sizes of distinct blobs referenced by at least one active artifact. */
  storageBytes: number;
}

export interface ApiKeyRow {
  id: string;
  tenantId: string;
  /** Hex SHA-256 of the full key; the key itself is never stored. */
  hash: string;
  last4: string;
  createdAt: number;
  revokedAt: number | null;
}

/** `pending` is a presigned upload waiting for its bytes; it is invisible to every read but complete. */
export type ArtifactStatus = 'active' | 'deleted' | 'expired' | 'pending';

export interface ArtifactRow {
  id: string;
  tenantId: string;
  filename: string;
  contentType: string;
  sizeBytes: number;
  contentHash: string;
  metadata: Record<string, unknown>;
  sessionId: string | null;
  agentId: string | null;
  createdAt: number;
  expiresAt: number | null;
  deletedAt: number | null;
  status: ArtifactStatus;
}

export interface SessionRow {
  tenantId: string;
  sessionId: string;
  /** Active artifacts that name this session. */
  artifactCount: number;
  sealedAt: number | null;
  firstArtifactAt: number;
  lastArtifactAt: number;
}

export interface LinkRow {
  id: string;
  tenantId: string;
  artifactId: string;
  createdAt: number;
  expiresAt: number;
  /** When its owner revoked it; a revoked link serves nothing and counts nowhere. */
  revokedAt: number | null;
}

/** A download link to a (sealed) session's archive: the same lifetime, revoke and cap as an artifact's link. */
export interface SessionLinkRow {
  id: string;
  tenantId: string;
  sessionId: string;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

export interface PageRow {
  slug: string;
  tenantId: string;
  artifactId: string;
  visibility: 'unlisted' | 'public';
  access: 'none' | 'password';
  title: string | null;
  passwordHash: string | null;
  live: boolean;
  /** Set by an operator takedown: the page stays offline and its owner cannot publish it again until restored. */
  takenDownAt: number | null;
  createdAt: number;
  updatedAt: number;
}
