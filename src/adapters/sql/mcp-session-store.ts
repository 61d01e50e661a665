import type { McpSessionRow, McpSessionStore } from '../../ports/mcp-session-store.js';
import { type Stored, table } from './table.js';
import { lockTenant } from './tenants.js';
import { SqlWebhookStore } from './webhook-store.js';
import { all, one, run } from './work.js';

const SESSIONS = table<McpSessionRow>()('mcp_sessions', 'id tenant_id principal_id created_at last_used_at', {});

const read = (r: Stored | null): McpSessionRow | null => {
  const row = SESSIONS.read(r);
  if (row) {
    row.createdAt = Number(row.createdAt);
    row.lastUsedAt = Number(row.lastUsedAt);
  }
  return row;
};

const dropSubscriptions = (id: string) => run('DELETE FROM mcp_subscriptions WHERE session_id = ?', [id]);
const dropSession = (id: string) => run('DELETE FROM mcp_sessions WHERE id = ?', [id]);

/** The hosted MCP endpoint's sessions and their subscriptions: the last class of the chain. */
export class SqlMcpSessionStore extends SqlWebhookStore implements McpSessionStore {
  async createMcpSession(row: McpSessionRow, max: number): Promise<void> {
    const d = this.d;
    return this.sql.write(function* () {
      // The tenant row's lock makes the count, the eviction and the insert one step across instances.
      yield* lockTenant(d.forNoKeyUpdate, row.tenantId);
      const n = (yield* one<{ n: number | string }>('SELECT count(*) AS n FROM mcp_sessions WHERE tenant_id = ?', [
        row.tenantId,
      ]))!;
      const excess = Number(n.n) - max + 1;
      if (excess > 0) {
        const oldest = yield* all<{ id: string }>(
          'SELECT id FROM mcp_sessions WHERE tenant_id = ? ORDER BY last_used_at, id LIMIT ?',
          [row.tenantId, excess],
        );
        for (const { id } of oldest) {
          yield* dropSubscriptions(id);
          yield* dropSession(id);
        }
      }
      yield* run(SESSIONS.insert, SESSIONS.values(row));
    });
  }

  async getMcpSession(id: string): Promise<McpSessionRow | null> {
    return read(await this.sql.one<Stored>(`SELECT ${SESSIONS.list} FROM mcp_sessions WHERE id = ?`, [id]));
  }

  async touchMcpSession(id: string, at: number): Promise<void> {
    await this.sql.run('UPDATE mcp_sessions SET last_used_at = ? WHERE id = ? AND last_used_at < ?', [at, id, at]);
  }

  async deleteMcpSession(tenantId: string, id: string): Promise<boolean> {
    return this.sql.write(function* () {
      const gone = yield* run('DELETE FROM mcp_sessions WHERE id = ? AND tenant_id = ?', [id, tenantId]);
      if (gone > 0) yield* dropSubscriptions(id);
      return gone > 0;
    });
  }

  async subscribeMcp(sessionId: string, uri: string, max: number): Promise<'ok' | 'too_many' | 'gone'> {
    const d = this.d;
    return this.sql.write(function* () {
      // The session row's lock orders concurrent subscribes of one session (on any instance), so the cap holds.
      const session = yield* one(`SELECT id FROM mcp_sessions WHERE id = ?${d.forUpdate}`, [sessionId]);
      if (!session) return 'gone' as const;
      if (yield* one('SELECT 1 AS x FROM mcp_subscriptions WHERE session_id = ? AND uri = ?', [sessionId, uri])) {
        return 'ok' as const;
      }
      const n = (yield* one<{ n: number | string }>(
        'SELECT count(*) AS n FROM mcp_subscriptions WHERE session_id = ?',
        [sessionId],
      ))!;
      if (Number(n.n) >= max) return 'too_many' as const;
      yield* run('INSERT INTO mcp_subscriptions (session_id, uri) VALUES (?, ?)', [sessionId, uri]);
      return 'ok' as const;
    });
  }

  async unsubscribeMcp(sessionId: string, uri: string): Promise<void> {
    await this.sql.run('DELETE FROM mcp_subscriptions WHERE session_id = ? AND uri = ?', [sessionId, uri]);
  }

  async mcpSubscriptions(sessionId: string): Promise<string[] | null> {
    const rows = await this.sql.all<{ uri: string | null }>(
      `SELECT u.uri FROM mcp_sessions AS s LEFT JOIN mcp_subscriptions AS u ON u.session_id = s.id WHERE s.id = ?`,
      [sessionId],
    );
    if (rows.length === 0) return null;
    return rows.flatMap((r) => (r.uri === null ? [] : [r.uri]));
  }

  async purgeMcpSessions(idleBefore: number, batch: number): Promise<number> {
    const d = this.d;
    return this.sql.write(function* () {
      const idle = yield* all<{ id: string }>(
        `SELECT id FROM mcp_sessions WHERE last_used_at < ? ORDER BY last_used_at LIMIT ?${d.skipLocked}`,
        [idleBefore, batch],
      );
      for (const { id } of idle) {
        yield* dropSubscriptions(id);
        yield* dropSession(id);
      }
      return idle.length;
    });
  }
}
