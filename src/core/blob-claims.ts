/** Timing of the orphan-blob deletion protocol shared by the sweeper and uploads (see sweeper.ts). */

/** How long an unreferenced blob waits before deletion: far longer than any upload's pin-to-insert step. */
export const ORPHAN_GRACE_MS = 60 * 60 * 1000;
/**
 * A delete claim older than this belongs to a sweeper that died; another may finish its job.
 * While a claim holds, uploads of the same bytes wait (and then get a 503), so it is short. It
 * stays safe because a sweeper never works on a claim for more than CLAIM_WORK_MS, a quarter of
 * it: a blob delete is one unlink or one DeleteObject, and the batch stops early when slow.
 */
export const STALE_CLAIM_MS = 2 * 60 * 1000;
/** How long a sweeper keeps deleting under one claim before it leaves the rest to a later run. */
export const CLAIM_WORK_MS = STALE_CLAIM_MS / 4;
