import type { EventType } from '../shared/event-types.js';

/**
 * The change feed's records. Events are written by the metadata ports' own writes, in the same
 * transaction as the change they record (an artifact inserted, deleted, expired or purged, a
 * session sealed, a page published/updated/unpublished/taken down, a link created or revoked),
 * so a change that rolls back leaves no event and a committed one always has its event. This
 * port reads them back and drops old ones.
 *
 * `seq` is the event's position in its tenant's feed: 1, 2, 3, … with no gap and in commit order
 * (the writer holds the tenant's feed head until it commits), so a reader that has seen up to N
 * never misses an event by asking for those after N, on any number of instances.
 */
export interface EventRow {
  tenantId: string;
  seq: number;
  type: EventType;
  createdAt: number;
  /** The session of the artifact the event concerns (or the sealed session), for filtering. */
  sessionId: string | null;
  /**
   * The row the event concerns as it was after the change (ArtifactRow, SessionRow, PageRow
   * without its password hash, LinkRow, or a webhook's summary), for the core to render as the
   * API's record. Never a secret.
   */
  subject: Record<string, unknown>;
}

export interface EventQuery {
  /** Events with `seq > after`. */
  after: number;
  limit: number;
  /** Only these types (none: all). */
  types?: readonly EventType[];
  sessionId?: string;
}

export interface EventStore {
  /** The tenant's events after `query.after` matching the filters, in `seq` order, at most `limit`. */
  listEvents(tenantId: string, query: EventQuery): Promise<EventRow[]>;
  /**
   * The last `seq` written for each of these tenants (0 for a tenant with no event yet): what a
   * stream polls to learn, cheaply, that another instance wrote something.
   */
  latestSeqs(tenantIds: readonly string[]): Promise<Map<string, number>>;
  /** Drops events created before `before`, at most `batch`; how many (the sweeper's step). */
  purgeEvents(before: number, batch: number): Promise<number>;
}
