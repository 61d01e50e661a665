import type { Caller } from './tenants.js';

/**
 * Key lookups of recent callers, so a busy key costs one query per change of credentials rather
 * than one per request. An entry holds only under the store's `credentialsEpoch` it was read in:
 * a revoked key, a suspended tenant or a new plan moves the epoch, in this process or any other,
 * and every entry read before stops answering. The TTL is a backstop, not the mechanism: it
 * bounds how long a change can go unseen where the store's signal cannot arrive (PostgreSQL
 * behind a transaction-mode pooler, which does not deliver notifications).
 */
export class CallerCache {
  private readonly entries = new Map<string, { caller: Caller; epoch: number; until: number }>();

  constructor(
    private readonly maxEntries = 10_000,
    private readonly ttlMs = 10_000,
  ) {}

  get(keyHash: string, epoch: number | null, now: number): Caller | undefined {
    if (epoch === null) return undefined;
    const entry = this.entries.get(keyHash);
    if (!entry) return undefined;
    if (entry.epoch !== epoch || entry.until <= now) {
      this.entries.delete(keyHash);
      return undefined;
    }
    return entry.caller;
  }

  /** `epoch` is the one read before the lookup started, so a change during the lookup wins. */
  set(keyHash: string, caller: Caller, epoch: number | null, now: number): void {
    if (epoch === null) return;
    // Oldest first out: a Map iterates in insertion order.
    if (this.entries.size >= this.maxEntries && !this.entries.has(keyHash)) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(keyHash, { caller, epoch, until: now + this.ttlMs });
  }
}
