import type { AttemptRecord, DeliveryRow, WebhookRow, WebhookStore } from '../../ports/webhook-store.js';
import { SqlEventStore } from './event-store.js';
import { appendEvents } from './events.js';
import { type Stored, table } from './table.js';
import { lockTenant } from './tenants.js';
import { all, one, run } from './work.js';

const WEBHOOKS = table<WebhookRow>()(
  'webhooks',
  'id tenant_id url types session_id secret previous_secret previous_until status created_at cursor_seq attempts failing_since next_attempt_at disabled_at lease_owner lease_until',
  { types: 'json' },
);
const DELIVERIES = table<DeliveryRow>()(
  'webhook_deliveries',
  'id webhook_id tenant_id event_seq event_type attempt delivered status_code error duration_ms created_at',
  { delivered: 'bool' },
);
const HOOK = WEBHOOKS.list;
const GET = `SELECT ${HOOK} FROM webhooks WHERE id = ? AND tenant_id = ?`;
const HEAD = 'SELECT last_seq FROM event_heads WHERE tenant_id = ?';
const HELD = 'lease_owner = ? AND lease_until IS NOT NULL';

const read = (r: Stored | null) => {
  const row = WEBHOOKS.read(r);
  if (row) {
    row.cursorSeq = Number(row.cursorSeq);
    row.attempts = Number(row.attempts);
  }
  return row;
};

/** Webhook endpoints, their leases and their delivery log. */
export class SqlWebhookStore extends SqlEventStore implements WebhookStore {
  async createWebhook(row: Omit<WebhookRow, 'cursorSeq'>, max: number): Promise<WebhookRow | null> {
    const d = this.d;
    return this.sql.write(function* () {
      yield* lockTenant(d.forNoKeyUpdate, row.tenantId);
      const n = (yield* one<{ n: number | string }>('SELECT count(*) AS n FROM webhooks WHERE tenant_id = ?', [
        row.tenantId,
      ]))!;
      if (Number(n.n) >= max) return null;
      const head = yield* one<{ last_seq: number | string }>(HEAD, [row.tenantId]);
      const full: WebhookRow = { ...row, cursorSeq: Number(head?.last_seq ?? 0) };
      yield* run(WEBHOOKS.insert, WEBHOOKS.values(full));
      return full;
    });
  }

  async getWebhook(tenantId: string, id: string): Promise<WebhookRow | null> {
    return read(await this.sql.one<Stored>(GET, [id, tenantId]));
  }

  async listWebhooks(tenantId: string, limit: number, after?: [number, string]): Promise<WebhookRow[]> {
    const params: unknown[] = [tenantId];
    const cond = after ? ' AND (created_at, id) > (?, ?)' : '';
    if (after) params.push(after[0], after[1]);
    params.push(limit);
    const rows = await this.sql.all<Stored>(
      `SELECT ${HOOK} FROM webhooks WHERE tenant_id = ?${cond} ORDER BY created_at, id LIMIT ?`,
      params,
    );
    return rows.map((r) => read(r)!);
  }

  async deleteWebhook(tenantId: string, id: string): Promise<boolean> {
    return this.sql.write(function* () {
      const gone = yield* run('DELETE FROM webhooks WHERE id = ? AND tenant_id = ?', [id, tenantId]);
      if (gone === 0) return false;
      yield* run('DELETE FROM webhook_deliveries WHERE webhook_id = ?', [id]);
      return true;
    });
  }

  async rotateWebhookSecret(tenantId: string, id: string, secret: string, previousUntil: number) {
    return read(
      await this.sql.change<Stored>(
        `UPDATE webhooks SET previous_secret = secret, previous_until = ?, secret = ? WHERE id = ? AND tenant_id = ?
         RETURNING ${HOOK}`,
        [previousUntil, secret, id, tenantId],
      ),
    );
  }

  async enableWebhook(tenantId: string, id: string, now: number) {
    return read(
      await this.sql.change<Stored>(
        `UPDATE webhooks SET status = 'active', disabled_at = NULL, attempts = 0, failing_since = NULL,
           next_attempt_at = ? WHERE id = ? AND tenant_id = ? RETURNING ${HOOK}`,
        [now, id, tenantId],
      ),
    );
  }

  async claimWebhooks(owner: string, now: number, until: number, batch: number): Promise<WebhookRow[]> {
    const d = this.d;
    // Every instance asks this several times a second: a plain read first, so that with nothing
    // due no write transaction is opened (on SQLite it would take the database's write lock).
    const due = `SELECT w.id FROM webhooks AS w ${d.indexedBy('webhooks_due')}
      WHERE w.status = 'active' AND w.next_attempt_at <= ? AND coalesce(w.lease_until, 0) <= ?
        AND w.cursor_seq < coalesce((SELECT h.last_seq FROM event_heads AS h WHERE h.tenant_id = w.tenant_id), 0)
      LIMIT 1`;
    if (!(await this.sql.one(due, [now, now]))) return [];
    // One statement: the candidates are locked (skipping those another claim holds), re-checked
    // on their latest version, and leased.
    const rows = await this.sql.write(function* () {
      return yield* all<Stored>(
        `UPDATE webhooks SET lease_owner = ?, lease_until = ? WHERE id IN (
           SELECT w.id FROM webhooks AS w ${d.indexedBy('webhooks_due')}
           WHERE w.status = 'active' AND w.next_attempt_at <= ? AND coalesce(w.lease_until, 0) <= ?
             AND w.cursor_seq < coalesce((SELECT h.last_seq FROM event_heads AS h WHERE h.tenant_id = w.tenant_id), 0)
           ORDER BY w.next_attempt_at LIMIT ?${d.skipLocked})
         AND status = 'active' AND coalesce(lease_until, 0) <= ?
         RETURNING ${HOOK}`,
        [owner, until, now, now, batch, now],
      );
    });
    return rows.map((r) => read(r)!);
  }

  async renewWebhookLease(id: string, owner: string, until: number): Promise<boolean> {
    return (await this.sql.run(`UPDATE webhooks SET lease_until = ? WHERE id = ? AND ${HELD}`, [until, id, owner])) > 0;
  }

  async skipWebhookTo(id: string, owner: string, seq: number): Promise<boolean> {
    const moved = await this.sql.run(
      `UPDATE webhooks SET cursor_seq = ${this.d.greatest}(cursor_seq, ?) WHERE id = ? AND ${HELD}`,
      [seq, id, owner],
    );
    return moved > 0;
  }

  async recordAttempt(r: AttemptRecord): Promise<boolean> {
    const d = this.d;
    const { delivery: x } = r;
    return this.sql.write(function* () {
      const held = yield* one<{ id: string }>(`SELECT id FROM webhooks WHERE id = ? AND ${HELD}${d.forUpdate}`, [
        x.webhookId,
        r.owner,
      ]);
      if (!held) return false;
      yield* run(DELIVERIES.insert, DELIVERIES.values(x));
      if (x.delivered) {
        yield* run(
          `UPDATE webhooks SET cursor_seq = ${d.greatest}(cursor_seq, ?), attempts = 0, failing_since = NULL,
             next_attempt_at = ? WHERE id = ?`,
          [x.eventSeq, r.nextAttemptAt, x.webhookId],
        );
      } else if (r.disable) {
        yield* run(
          `UPDATE webhooks SET status = 'disabled', disabled_at = ?, attempts = attempts + 1, lease_owner = NULL,
             lease_until = NULL WHERE id = ?`,
          [r.disable.at, x.webhookId],
        );
        yield* appendEvents([
          {
            tenantId: x.tenantId,
            type: 'webhook.disabled',
            createdAt: r.disable.at,
            sessionId: null,
            subject: r.disable.subject,
          },
        ]);
      } else {
        yield* run(
          `UPDATE webhooks SET attempts = attempts + 1, failing_since = coalesce(failing_since, ?), next_attempt_at = ?
           WHERE id = ?`,
          [x.createdAt, r.nextAttemptAt, x.webhookId],
        );
      }
      return true;
    });
  }

  async releaseWebhook(id: string, owner: string): Promise<void> {
    await this.sql.run(`UPDATE webhooks SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND ${HELD}`, [
      id,
      owner,
    ]);
  }

  async listDeliveries(tenantId: string, webhookId: string, limit: number, after?: [number, string]) {
    const params: unknown[] = [webhookId, tenantId];
    const cond = after ? ' AND (created_at, id) < (?, ?)' : '';
    if (after) params.push(after[0], after[1]);
    params.push(limit);
    const rows = await this.sql.all<Stored>(
      `SELECT ${DELIVERIES.list} FROM webhook_deliveries WHERE webhook_id = ? AND tenant_id = ?${cond}
       ORDER BY created_at DESC, id DESC LIMIT ?`,
      params,
    );
    return rows.map((r) => {
      const row = DELIVERIES.read(r);
      row.eventSeq = Number(row.eventSeq);
      return row;
    });
  }

  async purgeDeliveries(before: number, batch: number): Promise<number> {
    const d = this.d;
    return this.sql.run(
      `DELETE FROM webhook_deliveries WHERE id IN (
         SELECT id FROM webhook_deliveries ${d.indexedBy('webhook_deliveries_by_age')} WHERE created_at < ? LIMIT ?${d.skipLocked})`,
      [before, batch],
    );
  }
}
