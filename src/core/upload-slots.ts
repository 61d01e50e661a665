import { CairnError } from './errors.js';

/**
 * A request body above this size holds memory while it streams in (hashing slots, write buffers,
 * or the whole body for JSON), so it takes one of its tenant's upload slots. Smaller ones do not.
 */
export const UPLOAD_SLOT_AFTER_BYTES = 1024 * 1024;

/** How long a refused client is told to wait: uploads take seconds to minutes to finish. */
export const UPLOAD_SLOT_RETRY_AFTER_SECONDS = 5;

/** The default of CAIRN_MAX_UPLOADS_PER_TENANT. */
export const DEFAULT_MAX_UPLOADS_PER_TENANT = 16;

/** Gives a slot back; calling it again does nothing. */
export type ReleaseSlot = () => void;

/**
 * Large uploads in flight per tenant, in this process. The rate limit counts requests as they
 * start, not how long they stay: without this, one key could open hundreds of large uploads at
 * once (its burst allows 200) and hold several megabytes of this process's memory with each,
 * which starves every other tenant of the same instance. Past `perTenant` the next large upload
 * is refused at once with 429 `rate_limited`, before any of its body is read; SDKs retry after
 * Retry-After. Zero turns the limit off.
 */
export class UploadSlots {
  private readonly held = new Map<string, number>();

  constructor(
    readonly perTenant: number,
    /** The refusal's message (default: about uploads; archive streams share this class). */
    private readonly refusal: (perTenant: number) => string = (n) =>
      `Too many large uploads in flight for this tenant (at most ${n} at once); retry when one has finished.`,
  ) {}

  /** Slots `tenantId` holds now. */
  inUse(tenantId: string): number {
    return this.held.get(tenantId) ?? 0;
  }

  /** Takes one of `tenantId`'s slots, or throws 429 `rate_limited` if it holds them all. */
  take(tenantId: string): ReleaseSlot {
    if (this.perTenant === 0) return () => {};
    const n = this.inUse(tenantId);
    if (n >= this.perTenant) {
      throw new CairnError('rate_limited', this.refusal(this.perTenant), {
        retryAfterSeconds: UPLOAD_SLOT_RETRY_AFTER_SECONDS,
      });
    }
    this.held.set(tenantId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.inUse(tenantId) - 1;
      if (left > 0) this.held.set(tenantId, left);
      else this.held.delete(tenantId);
    };
  }
}
