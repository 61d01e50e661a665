/**
 * State of resumable (tus) uploads, shared by every instance: how far each upload has come, the
 * pieces of it the blob store holds, and which request may write to it now (a lease).
 */

/** What one PATCH delivered: a landed object of the blob store, `sizeBytes` long. */
export interface ResumableSegment {
  landingKey: string;
  sizeBytes: number;
}

export interface ResumableRow {
  /** The id of the pending artifact the finished upload becomes. */
  id: string;
  tenantId: string;
  /** Upload-Length: the size the upload will have. */
  lengthBytes: number;
  /** Upload-Offset: bytes received and recorded so far (the sum of the segments' sizes). */
  offsetBytes: number;
  /** In order; together they are the first `offsetBytes` bytes of the upload. */
  segments: ResumableSegment[];
  createdAt: number;
  /** Past this (ms) the upload is gone: refused, then removed by the sweeper. */
  expiresAt: number;
  /** The request that may write now, until `leaseUntil` (ms); null when none. */
  leaseOwner: string | null;
  leaseUntil: number | null;
}

export type NewResumable = Pick<ResumableRow, 'id' | 'tenantId' | 'lengthBytes' | 'createdAt' | 'expiresAt'>;

/** What a new upload must fit beside the tenant's others (the core's rule, the store's atomic check). */
export interface ResumableCaps {
  /** Unfinished (unexpired at the new row's `createdAt`) uploads the tenant may have at once. */
  maxOpen: number;
  /** The tenant's stored bytes plus the lengths of its unfinished uploads, the new one's included, may not pass this. */
  storageLimitBytes: number;
}

export interface ResumableUploadStore {
  /**
   * Inserts the upload unless the tenant already has `caps.maxOpen` unfinished ones
   * (`'too_many'`), or its storage and their lengths with this one's would pass
   * `caps.storageLimitBytes` (`'storage_full'`). The checks and the insert are one step:
   * concurrent creations, from any number of instances, never pass a cap together.
   */
  createResumable(row: NewResumable, caps: ResumableCaps): Promise<'created' | 'too_many' | 'storage_full'>;
  /** Null when the tenant has no such upload (another tenant's counts as none). */
  getResumable(tenantId: string, id: string): Promise<ResumableRow | null>;
  /**
   * Gives the upload's lease to `owner` until `until` when no other owner holds one that is still
   * valid at `now`. Returns the row with the lease taken, `'held'` when another owner has it, or
   * null when there is no such upload.
   */
  leaseResumable(
    tenantId: string,
    id: string,
    owner: string,
    now: number,
    until: number,
  ): Promise<ResumableRow | 'held' | null>;
  /** Extends `owner`'s lease; false when it no longer holds it. */
  renewResumableLease(id: string, owner: string, until: number): Promise<boolean>;
  /** Gives the lease back (no effect unless `owner` holds it). */
  releaseResumable(id: string, owner: string): Promise<void>;
  /**
   * Records a segment appended by the lease holder: the offset moves from `fromOffset` to
   * `fromOffset + segment.sizeBytes`. False, recording nothing, when `owner` no longer holds the
   * lease, the offset is no longer `fromOffset`, or the upload has expired by `now`.
   */
  appendResumable(
    id: string,
    owner: string,
    fromOffset: number,
    segment: ResumableSegment,
    now: number,
  ): Promise<boolean>;
  /** Removes the tenant's upload; true when a row went. */
  deleteResumable(tenantId: string, id: string): Promise<boolean>;
  /**
   * Claims up to `batch` uploads that expired at or before `now` and that nobody holds (no lease
   * still valid at `now`): each gets `owner`'s lease until `until`, in one step, so sweepers
   * running at once (on any instance) claim disjoint sets and none removes what another counts.
   * Returns the claimed rows, oldest expiry first: what the sweeper removes.
   */
  claimExpiredResumables(owner: string, now: number, until: number, batch: number): Promise<ResumableRow[]>;
  /** How many uploads the tenant has that have not expired by `now`, and the sum of their lengths. */
  openResumables(tenantId: string, now: number): Promise<{ count: number; lengthBytes: number }>;
}
