import type { EventQuery, EventRow, EventStore } from '../../ports/event-store.js';
import type { EventType } from '../../shared/event-types.js';
import { SqlSweeperStore } from './sweeper.js';

interface StoredEvent {
  tenant_id: string;
  seq: number | string;
  type: EventType;
  created_at: number | string;
  session_id: string | null;
  data: string;
}

const COLUMNS = 'tenant_id, seq, type, created_at, session_id, data';

function readEvent(r: StoredEvent): EventRow {
  return {
    tenantId: r.tenant_id,
    seq: Number(r.seq),
    type: r.type,
    createdAt: Number(r.created_at),
    sessionId: r.session_id,
    subject: JSON.parse(r.data) as Record<string, unknown>,
  };
}

/** The change feed's reads and its sweep: the last of the metadata ports. */
export class SqlEventStore extends SqlSweeperStore implements EventStore {
  async listEvents(tenantId: string, q: EventQuery): Promise<EventRow[]> {
    const d = this.d;
    const params: unknown[] = [tenantId];
    let where = 'tenant_id = ?';
    if (q.sessionId !== undefined) {
      where += ' AND session_id = ?';
      params.push(q.sessionId);
    }
    where += ' AND seq > ?';
    params.push(q.after);
    if (q.types && q.types.length > 0) {
      where += ` AND ${d.inList('type')}`;
      params.push(d.list(q.types));
    }
    params.push(q.limit);
    const rows = await this.sql.all<StoredEvent>(
      `SELECT ${COLUMNS} FROM events WHERE ${where} ORDER BY seq LIMIT ?`,
      params,
    );
    return rows.map(readEvent);
  }

  async latestSeqs(tenantIds: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>(tenantIds.map((t) => [t, 0]));
    if (tenantIds.length === 0) return out;
    const d = this.d;
    const rows = await this.sql.all<{ tenant_id: string; last_seq: number | string }>(
      `SELECT tenant_id, last_seq FROM event_heads WHERE ${d.inList('tenant_id')}`,
      [d.list(tenantIds)],
    );
    for (const r of rows) out.set(r.tenant_id, Number(r.last_seq));
    return out;
  }

  async purgeEvents(before: number, batch: number): Promise<number> {
    const d = this.d;
    return this.sql.run(
      `DELETE FROM events WHERE (tenant_id, seq) IN (
         SELECT tenant_id, seq FROM events ${d.indexedBy('events_by_age')} WHERE created_at < ? LIMIT ?${d.skipLocked})`,
      [before, batch],
    );
  }
}
