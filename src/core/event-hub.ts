import type { EventStore } from '../ports/event-store.js';
import { CairnError } from './errors.js';

/** How often the hub reads the heads of the tenants it follows: an event made anywhere is seen within this. */
export const EVENT_POLL_MS = 200;

/** Streams one tenant may hold open on one instance by default (CAIRN_MAX_EVENT_STREAMS_PER_TENANT). */
export const DEFAULT_MAX_STREAMS_PER_TENANT = 10;

export interface Follower {
  /** The tenant's feed head moved to `head` (called at most once per poll). */
  moved(head: number): void;
  /** The hub is closing (the instance shuts down): end the stream. */
  closed(): void;
}

/**
 * Tells open streams (SSE, the MCP subscriptions, the webhook deliverer) that their tenant's feed
 * moved, on this instance or any other: one read of the followed tenants' heads (`event_heads`)
 * every 200 ms, and none while nobody follows. Polling was chosen over PostgreSQL's LISTEN/NOTIFY:
 * a NOTIFY in the writing transaction takes a database-wide lock at commit, which every upload
 * of every instance would queue on, and the same poll serves SQLite files shared by processes.
 * Bounds the streams each tenant holds on this instance.
 */
export class EventHub {
  private readonly followers = new Map<string, Set<Follower>>();
  private readonly heads = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private closing = false;

  constructor(
    private readonly store: Pick<EventStore, 'latestSeqs'>,
    readonly maxPerTenant = DEFAULT_MAX_STREAMS_PER_TENANT,
    private readonly pollMs = EVENT_POLL_MS,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Streams `tenantId` holds open here. */
  open(tenantId: string): number {
    return this.followers.get(tenantId)?.size ?? 0;
  }

  /**
   * Follows `tenantId`'s feed, or throws 429 `rate_limited` when it holds its streams already
   * (`counted: false` for followers that are not a client's stream, such as webhooks). Returns
   * the function that stops following.
   */
  follow(tenantId: string, follower: Follower, counted = true): () => void {
    if (this.closing)
      throw new CairnError('server_error', 'Shutting down; reconnect.', { status: 503, retryAfterSeconds: 1 });
    let set = this.followers.get(tenantId);
    if (counted && (set?.size ?? 0) >= this.maxPerTenant) {
      throw new CairnError(
        'rate_limited',
        `Too many event streams open for this account on this server (at most ${this.maxPerTenant}); close one first.`,
        { retryAfterSeconds: 5 },
      );
    }
    if (!set) {
      set = new Set();
      this.followers.set(tenantId, set);
    }
    set.add(follower);
    this.ensureTimer();
    let gone = false;
    return () => {
      if (gone) return;
      gone = true;
      const own = this.followers.get(tenantId);
      own?.delete(follower);
      if (own && own.size === 0) {
        this.followers.delete(tenantId);
        this.heads.delete(tenantId);
      }
      if (this.followers.size === 0) this.stopTimer();
    };
  }

  /** One poll now (the timer's; tests call it to skip the wait). */
  async poll(): Promise<void> {
    if (this.polling || this.followers.size === 0) return;
    this.polling = true;
    try {
      const tenants = [...this.followers.keys()];
      const seqs = await this.store.latestSeqs(tenants);
      for (const [tenantId, head] of seqs) {
        const known = this.heads.get(tenantId);
        this.heads.set(tenantId, head);
        if (known !== undefined && head <= known) continue;
        for (const f of this.followers.get(tenantId) ?? []) f.moved(head);
      }
    } catch (err) {
      this.onError(err);
    } finally {
      this.polling = false;
    }
  }

  /** Ends every stream (they reconnect elsewhere) and stops polling. */
  close(): void {
    this.closing = true;
    this.stopTimer();
    for (const set of this.followers.values()) for (const f of [...set]) f.closed();
    this.followers.clear();
  }

  private ensureTimer(): void {
    if (this.timer || this.closing) return;
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
