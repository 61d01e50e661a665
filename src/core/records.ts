import type { ArtifactRow, PageRow, SessionLinkRow, SessionRow } from '../ports/metadata-store.js';
import type { ArtifactRecord } from '../wire/artifacts.js';
import type { SessionRecord } from '../wire/sessions.js';
import type { SessionLinkRecord } from '../wire/sharing.js';
import type { Origins } from './context.js';
import { toIso, toIsoOrNull } from './time.js';

// Rows to the artifact, session and session-link records of the wire schema (src/wire).

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

/**
 * A pending artifact as its owner's GET shows it: the record it will have (size as declared;
 * content_hash empty until the bytes arrive), plus `status: "pending"` and `held_until`, after
 * which an upload never completed is released. Active records carry neither field.
 */
export function pendingRecord(row: ArtifactRow, heldUntil: number, origins: Origins): ArtifactRecord {
  return { ...artifactRecord(row, null, origins), status: 'pending', held_until: toIso(heldUntil) };
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

/** A session's link as listed; creating one (and its events) add `session_id`. */
export function sessionLinkRecord(l: SessionLinkRow, origins: Origins): SessionLinkRecord {
  return {
    link_id: l.id,
    url: `${origins.viewer}/s/${l.id}`,
    archive_url: `${origins.download}/${l.id}`,
    expires_at: toIso(l.expiresAt),
    created_at: toIso(l.createdAt),
  };
}
