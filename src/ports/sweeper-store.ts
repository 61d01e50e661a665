/**
 * The sweeper's side of the metadata, which no request uses: hard deletes of rows past retention
 * and of abandoned presigned uploads, blobs no artifact references (claimed, then forgotten once
 * their bytes are deleted), old idempotency records and dead links. Expiring artifacts is not
 * here: requests settle their tenant's expiry themselves (ArtifactStore.expireArtifacts), and the
 * sweeper uses that port for it too.
 *
 * The rules every metadata port shares (each method atomic, timestamps in epoch milliseconds,
 * conflicts thrown as `CairnError`) are in metadata-store.ts.
 */

export interface ExpiredBatchResult {
  /** Artifacts moved from active to expired in this batch. */
  expired: number;
}

export interface BlobRef {
  tenantId: string;
  contentHash: string;
  /** The claim this sweeper holds; pass it back to `forgetBlob`. */
  claimedAt: number;
}

/** Each call handles at most `batch` items in its own transaction, and returns how many. */
export interface SweeperStore {
  /**
   * Hard-deletes rows deleted before `deletedBefore` and rows expired before `expiredBefore`, with
   * their links and pages, recording an `artifact.purged` event at `now` for each.
   */
  purgeArtifacts(deletedBefore: number, expiredBefore: number, batch: number, now: number): Promise<number>;
  /** Hard-deletes pending rows created before `createdBefore` (abandoned presigned uploads). */
  purgePendingUploads(createdBefore: number, batch: number): Promise<number>;
  /** Marks blob rows that no artifact row (in any status) references as orphaned at `now`. */
  markOrphanBlobs(now: number, batch: number): Promise<number>;
  /**
   * Claims blobs orphaned before `orphanedBefore` and still unreferenced (and stale claims made
   * before `staleClaimBefore`) for deletion, stamping them with `now`. While claimed, `pinBlob`
   * answers `deleting`. The caller deletes the bytes, then calls `forgetBlob`.
   */
  claimOrphanBlobs(orphanedBefore: number, staleClaimBefore: number, now: number, batch: number): Promise<BlobRef[]>;
  /** Removes the blob row if the claim `claimedAt` still holds. */
  forgetBlob(ref: BlobRef): Promise<void>;
  /** Drops idempotency records created before `before`. */
  purgeIdempotency(before: number, batch: number): Promise<number>;
  /**
   * Drops links that expired at or before `now` (unrevoked), revoked at or before `revokedBefore`,
   * or whose artifact is no longer active.
   */
  purgeDeadLinks(now: number, revokedBefore: number, batch: number): Promise<number>;
}
