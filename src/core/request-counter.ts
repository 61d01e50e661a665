import type { RequestDelta, TenantStore } from '../ports/tenant-store.js';

/** One (tenant, month) counter as this instance knows it. */
interface Entry {
  tenantId: string;
  month: string;
  /** The store's total as of the last flush or load (it includes other instances' requests). */
  base: number;
  /** Counted here and being written by a flush that has not returned yet. */
  inFlight: number;
  /** Counted here since the last flush started. */
  unflushed: number;
  usedAt: number;
}

/**
 * The monthly request counter, counted in memory and written to the store in batches.
 *
 * Why: counting every API call with its own write transaction was the largest single cost of a
 * small request (a SQLite commit, or a PostgreSQL round trip, per call). Here a call costs no I/O
 * once its counter is loaded: the instance keeps `base` (the store's total) plus what it counted
 * itself, and every `flushEveryMs` one `addRequests` call adds its counts and reads back the
 * totals, which brings in what other instances counted.
 *
 * What it means: on one instance the quota is exact. With several instances, one sees the others'
 * requests up to one flush interval late, so together they can pass the monthly limit by the
 * requests the others admit in that interval (at most about 20 per instance at the 100/s rate
 * limit with the default 100 ms). A crash loses at most one interval of counts. Both are far
 * below what a 10,000-a-month quota can notice.
 */
export class RequestCounter {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private nextFlush: Promise<void> | null = null;

  constructor(
    private readonly store: TenantStore,
    /** A background flush that failed (its counts are kept for the next one). */
    private readonly onFlushError: (err: unknown) => void = () => {},
    /** Entries unused this long are dropped (their counts are flushed first). */
    private readonly idleMs = 60_000,
  ) {}

  /** This instance's view of the counter: the store's total plus what it has not written yet. */
  async count(tenantId: string, month: string): Promise<number> {
    return total(await this.entry(tenantId, month));
  }

  /** Loads the counter here; it stays loaded while it is used (see `idleMs`). */
  async load(tenantId: string, month: string): Promise<void> {
    await this.entry(tenantId, month);
  }

  /** Whether the counter is loaded here, so that `countNow` and `tryCountNow` can answer. */
  isLoaded(tenantId: string, month: string): boolean {
    return this.entries.has(keyOf(tenantId, month));
  }

  /** `count`, synchronously; the counter must be loaded (isLoaded). */
  countNow(tenantId: string, month: string): number {
    return total(this.loaded(tenantId, month));
  }

  /**
   * Counts one request unless the counter has reached `limit`; whether it was counted. The counter
   * must be loaded (isLoaded). Synchronous, so no other request can slip between the check and
   * the increment.
   */
  tryCountNow(tenantId: string, month: string, limit: number): boolean {
    const e = this.loaded(tenantId, month);
    if (total(e) >= limit) return false;
    e.unflushed++;
    return true;
  }

  /** Flushes every `ms` in the background (the timer does not keep the process alive). */
  start(ms = 100): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush().catch(this.onFlushError), ms);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }

  /**
   * Writes what was counted and reloads every known total (so counts written by others, an
   * operator or another instance, are seen). One flush at a time; a failed one keeps its counts.
   */
  flush(): Promise<void> {
    if (!this.flushing) return this.flushNow();
    // The running flush took its counts and read its totals before this call, so it can answer
    // neither what was counted since nor what others wrote since: one more follows it, shared by
    // every caller meanwhile (stop() relies on this to write everything).
    this.nextFlush ??= this.flushing
      .catch(() => {})
      .then(() => {
        this.nextFlush = null;
        return this.flushNow();
      });
    return this.nextFlush;
  }

  private flushNow(): Promise<void> {
    this.flushing = this.flushOnce().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const now = performance.now();
    const batch = [...this.entries.values()];
    if (batch.length === 0) return;
    const deltas: RequestDelta[] = batch.map((e) => {
      const n = e.unflushed;
      e.inFlight += n;
      e.unflushed = 0;
      return { tenantId: e.tenantId, month: e.month, n };
    });
    let totals: number[];
    try {
      totals = await this.store.addRequests(deltas);
    } catch (err) {
      batch.forEach((e, i) => {
        const n = deltas[i]?.n ?? 0;
        e.inFlight -= n;
        e.unflushed += n;
      });
      throw err;
    }
    batch.forEach((e, i) => {
      e.inFlight -= deltas[i]?.n ?? 0;
      e.base = totals[i] ?? e.base;
      if (e.unflushed === 0 && e.inFlight === 0 && now - e.usedAt > this.idleMs) {
        this.entries.delete(keyOf(e.tenantId, e.month));
      }
    });
  }

  /** The loaded entry, marked as used; throws if it is not loaded (see isLoaded). */
  private loaded(tenantId: string, month: string): Entry {
    const known = this.entries.get(keyOf(tenantId, month));
    if (!known) throw new Error('request counter not loaded; check isLoaded() first');
    known.usedAt = performance.now();
    return known;
  }

  private async entry(tenantId: string, month: string): Promise<Entry> {
    const key = keyOf(tenantId, month);
    if (this.entries.has(key)) return this.loaded(tenantId, month);
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.store
        .getRequestCount(tenantId, month)
        .then((base) => {
          const e: Entry = { tenantId, month, base, inFlight: 0, unflushed: 0, usedAt: performance.now() };
          this.entries.set(key, e);
          return e;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, pending);
    }
    return pending;
  }
}

const keyOf = (tenantId: string, month: string) => `${tenantId}\u0000${month}`;
const total = (e: Entry) => e.base + e.inFlight + e.unflushed;
