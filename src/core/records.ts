import type { ArtifactRow, PageRow, SessionRow } from '../ports/metadata-store.js';
import type { Origins } from './context.js';
import { toIso, toIsoOrNull } from './time.js';

/** The artifact record of the wire contract. Never carries tenant ids, storage keys or `deleted_at`. */
export interface ArtifactRecord {
  artifact_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  content_hash: string;
  metadata: Record<string, unknown>;
  session_id: string | null;
  agent_id: string | null;
  created_at: string;
  expires_at: string | null;
  page: { public_url: string; visibility: 'unlisted' | 'public' } | null;
}

export function publicPageUrl(origins: Origins, slug: string): string {
  return `${origins.viewer}/a/${slug}`;
}

export function artifactRecord(row: ArtifactRow, page: PageRow | null, origins: Origins): ArtifactRecord {
  return {
    artifact_id: row.id,
    filename: row.filename,
    content_type: row.contentType,
    size_bytes: row.sizeBytes,
    content_hash: row.contentHash,
    metadata: row.metadata,
    session_id: row.sessionId,
    agent_id: row.agentId,
    created_at: toIso(row.createdAt),
    expires_at: toIsoOrNull(row.expiresAt),
    page: page?.live ? { public_url: publicPageUrl(origins, page.slug), visibility: page.visibility } : null,
  };
}

export interface SessionRecord {
  session_id: string;
  artifact_count: number;
  is_sealed: boolean;
  sealed_at: string | null;
  first_artifact_at: string;
  last_artifact_at: string;
}

export function sessionRecord(row: SessionRow): SessionRecord {
  return {
    session_id: row.sessionId,
    artifact_count: row.artifactCount,
    is_sealed: row.sealedAt !== null,
    sealed_at: toIsoOrNull(row.sealedAt),
    first_artifact_at: toIso(row.firstArtifactAt),
    last_artifact_at: toIso(row.lastArtifactAt),
  };
}
