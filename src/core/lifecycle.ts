import type { ArtifactStore } from '../ports/artifact-store.js';
import type { Clock } from '../ports/clock.js';
import type { ArtifactRow } from '../ports/metadata-records.js';
import { artifactNotFound, CairnError, notAnArtifactId } from './errors.js';
import { ARTIFACT_ID } from './ids.js';

/**
 * The read rule every route shares: unknown (or another tenant's, or still pending) → 404,
 * soft-deleted → 410 `artifact_already_deleted`, past its TTL → 410 `artifact_expired`, even
 * before the sweeper has marked it.
 */
export function requireReadable(row: ArtifactRow | null, now: number, id: string): ArtifactRow {
  if (!row || row.status === 'pending') throw artifactNotFound(id);
  if (row.status === 'deleted') throw new CairnError('artifact_already_deleted', 'Artifact was deleted.');
  if (row.status === 'expired' || (row.expiresAt !== null && row.expiresAt <= now)) {
    throw new CairnError('artifact_expired', 'Artifact has expired.');
  }
  return row;
}

/** True when the artifact may be served right now (same rule, as a boolean, for public routes). */
export function isServable(row: ArtifactRow, now: number): boolean {
  return row.status === 'active' && (row.expiresAt === null || row.expiresAt > now);
}

/**
 * An id that cannot exist is the caller's mistake, not a missing artifact: 400 naming the shape
 * (it tells nothing about any tenant's data), before the store is asked.
 */
export function checkArtifactId(id: string): void {
  if (!ARTIFACT_ID.test(id)) throw notAnArtifactId(id);
}

/** Rows per transaction when a read settles its tenant's expiry itself. */
const SETTLE_BATCH = 500;

/**
 * Expires the tenant's artifacts that are past their TTL now, so the usage read next (storage,
 * active links, session counts, and the quotas built on them) is exact instead of trailing the
 * sweeper by up to an interval. Costs one indexed read when nothing is due.
 */
export async function settleExpiry(
  deps: { artifactStore: ArtifactStore; clock: Clock },
  tenantId: string,
): Promise<void> {
  const now = deps.clock.now();
  for (let n = SETTLE_BATCH; n === SETTLE_BATCH; )
    n = await deps.artifactStore.expireArtifacts(now, SETTLE_BATCH, tenantId);
}
