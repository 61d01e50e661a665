import type { EventRow } from '../../ports/event-store.js';
import type { ArtifactRow, LinkRow, PageRow, SessionLinkRow, SessionRow } from '../../ports/metadata-records.js';
import type { EventType } from '../../shared/event-types.js';
import type { Dialect } from './dialect.js';
import { one, run, type Work } from './work.js';

/**
 * The change feed in SQL, written once for both engines. A change records its events with
 * `appendEvents`, inside its transaction (artifact-writes.ts, artifacts.ts, sharing.ts,
 * sweeper.ts); the driver writes them with `writeEvents`, last in the transaction, so the
 * tenant's feed head (event_heads) is locked only for the end of it: positions are handed out
 * under that lock and so follow commit order. On SQLite the writes sharing a group commit have
 * their events written together, one head bump per tenant for all of them (driver.ts).
 */

export type NewEvent = Omit<EventRow, 'seq'>;

const BUMP_HEAD = `INSERT INTO event_heads (tenant_id, last_seq) VALUES (?, ?)
  ON CONFLICT (tenant_id) DO UPDATE SET last_seq = event_heads.last_seq + excluded.last_seq
  RETURNING last_seq`;
const INSERT_ONE = 'INSERT INTO events (tenant_id, seq, type, created_at, session_id, data) VALUES (?, ?, ?, ?, ?, ?)';

/** Asks the driver to record the events in this transaction (see writeEvents). */
export function* appendEvents(events: readonly NewEvent[]): Work<void> {
  if (events.length > 0) yield { op: 'append', events };
}

/** Records the events, numbered per tenant in the order given. Tenants are taken in id order (no deadlock between batches). */
export function* writeEvents(d: Dialect, events: readonly NewEvent[]): Work<void> {
  if (events.length === 0) return;
  const byTenant = new Map<string, NewEvent[]>();
  for (const e of events) {
    const list = byTenant.get(e.tenantId);
    if (list) list.push(e);
    else byTenant.set(e.tenantId, [e]);
  }
  const rows: unknown[][] = [];
  for (const tenantId of [...byTenant.keys()].sort()) {
    const own = byTenant.get(tenantId)!;
    const head = yield* one<{ last_seq: number | string }>(BUMP_HEAD, [tenantId, own.length]);
    const first = Number(head!.last_seq) - own.length + 1;
    own.forEach((e, i) => {
      rows.push([tenantId, first + i, e.type, e.createdAt, e.sessionId, JSON.stringify(e.subject)]);
    });
  }
  if (rows.length === 1) {
    yield* run(INSERT_ONE, rows[0]!);
    return;
  }
  // Any number of rows in one statement of a fixed text (see Dialect.jsonRows).
  yield* run(
    `INSERT INTO events (tenant_id, seq, type, created_at, session_id, data)
     SELECT j.value ->> 0, CAST(j.value ->> 1 AS BIGINT), j.value ->> 2, CAST(j.value ->> 3 AS BIGINT),
       j.value ->> 4, j.value ->> 5 FROM ${d.jsonRows}`,
    [JSON.stringify(rows)],
  );
}

// The subjects, as the rows after the change. A page's password hash never enters the feed.

export const artifactEvent = (type: EventType, a: ArtifactRow, now: number): NewEvent => ({
  tenantId: a.tenantId,
  type,
  createdAt: now,
  sessionId: a.sessionId,
  subject: { ...a },
});

export const sessionEvent = (type: EventType, s: SessionRow, now: number): NewEvent => ({
  tenantId: s.tenantId,
  type,
  createdAt: now,
  sessionId: s.sessionId,
  subject: { ...s },
});

export const pageEvent = (type: EventType, p: PageRow, sessionId: string | null, now: number): NewEvent => ({
  tenantId: p.tenantId,
  type,
  createdAt: now,
  sessionId,
  subject: { ...p, passwordHash: null },
});

export const linkEvent = (type: EventType, l: LinkRow, sessionId: string | null, now: number): NewEvent => ({
  tenantId: l.tenantId,
  type,
  createdAt: now,
  sessionId,
  subject: { ...l },
});

export const sessionLinkEvent = (type: EventType, l: SessionLinkRow, now: number): NewEvent => ({
  tenantId: l.tenantId,
  type,
  createdAt: now,
  sessionId: l.sessionId,
  subject: { ...l },
});

/** The session of an artifact, for the events of its page and links. */
export function* sessionOf(artifactId: string, tenantId: string): Work<string | null> {
  const found = yield* one<{ session_id: string | null }>(
    'SELECT session_id FROM artifacts WHERE id = ? AND tenant_id = ?',
    [artifactId, tenantId],
  );
  return found?.session_id ?? null;
}
