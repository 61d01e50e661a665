import type { StagedBlob } from '../ports/blob-store.js';
import type { ArtifactRow } from '../ports/metadata-store.js';
import { blobKey, type CoreDeps } from './context.js';
import { invalid } from './errors.js';
import { settleExpiry } from './lifecycle.js';
import { PLANS } from './plans.js';
import type { UploadService } from './upload.js';

/**
 * The last steps of the uploads whose artifact exists before its bytes (presigned and resumable):
 * the staged bytes fill the pending row, then the row becomes active.
 */

/**
 * Checks the staged bytes against the size the client declared (`declared` names where, for the
 * message), pins and commits them under their content address, and records them on the pending
 * row. Consumes `staged`. False when the row is no longer pending (completed or removed meanwhile).
 */
export async function fillPending(
  deps: Pick<CoreDeps, 'artifactStore' | 'blobs'>,
  uploads: UploadService,
  row: ArtifactRow,
  staged: StagedBlob,
  declared: string,
): Promise<boolean> {
  try {
    if (staged.sizeBytes !== row.sizeBytes) {
      throw invalid(`Expected ${row.sizeBytes} bytes (the declared ${declared}), received ${staged.sizeBytes}.`);
    }
    // Concurrent completions of one upload (or uploads of the same bytes) take turns here: the
    // first puts the bytes in place, the others find them there and write nothing.
    const write = await uploads.pin(row.tenantId, staged);
    try {
      await deps.blobs.commit(staged, blobKey(row.tenantId, staged.sha256));
      return await deps.artifactStore.setPendingContent(row.tenantId, row.id, staged.sha256, staged.sizeBytes);
    } finally {
      // The bytes are in place and named by the pending row, which keeps them from the sweeper.
      await uploads.endWrite(write);
    }
  } finally {
    await deps.blobs.discard(staged);
  }
}

/**
 * pending (with its bytes) → active, counting its storage now: the quota is checked here again,
 * since the bytes may have taken long to arrive. Storage freed by expiry meanwhile counts.
 */
export async function activatePending(
  deps: Pick<CoreDeps, 'tenantStore' | 'artifactStore' | 'clock'>,
  tenantId: string,
  id: string,
): Promise<ArtifactRow | null> {
  await settleExpiry(deps, tenantId);
  const tenant = await deps.tenantStore.getTenant(tenantId);
  if (!tenant) return null;
  return deps.artifactStore.activateArtifact(tenantId, id, PLANS[tenant.plan].storageBytes, deps.clock.now());
}
