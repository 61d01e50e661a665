import type { ApiKeyRow, RequestDelta, TenantRow } from '../../ports/metadata-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import type { PlanName } from '../../shared/plan-name.js';
import { all, type Database, one, onePrepared, type Querier } from './database.js';
import { type ApiKeyRecord, TENANT_SELECT, type TenantRecord, toApiKey, toTenant } from './rows.js';

/** Tenants, API keys, settings and the monthly request counter. */

// Built once, like every statement text with a select list spliced in (see ARTIFACT_WITH_PAGE).
const GET_TENANT = `SELECT ${TENANT_SELECT} FROM tenants WHERE id = $1`;

export async function getTenant(q: Querier, id: string): Promise<TenantRow | null> {
  const row = await onePrepared<TenantRecord>(q, GET_TENANT, [id]);
  return row ? toTenant(row) : null;
}

export async function createTenant(q: Querier, t: TenantRow): Promise<TenantRow> {
  // The unique name constraint decides between concurrent creators; the loser gets no row back.
  const row = await one<TenantRecord>(
    q,
    `INSERT INTO tenants (id, name, plan, suspended, created_at, storage_bytes) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (name) DO NOTHING RETURNING *`,
    [t.id, t.name, t.plan, t.suspended, t.createdAt, t.storageBytes],
  );
  if (!row) throw new CairnError('invalid_request', `A tenant named '${t.name}' already exists.`);
  return toTenant(row);
}

/** `notify`: the `pg_notify` arguments that tell every instance credentials changed (on commit). */
export async function updateTenant(
  q: Querier,
  id: string,
  change: { plan?: PlanName; suspended?: boolean },
  notify: [string, string],
): Promise<TenantRow | null> {
  const row = await one<TenantRecord>(
    q,
    `WITH updated AS (
       UPDATE tenants SET plan = coalesce($2, plan), suspended = coalesce($3, suspended) WHERE id = $1 RETURNING *
     )
     SELECT updated.*, pg_notify($4, $5) FROM updated`,
    [id, change.plan ?? null, change.suspended ?? null, ...notify],
  );
  return row ? toTenant(row) : null;
}

export async function revokeApiKey(
  q: Querier,
  tenantId: string,
  keyId: string,
  now: number,
  notify: [string, string],
): Promise<boolean> {
  const row = await one<{ n: number }>(
    q,
    `WITH revoked AS (
       UPDATE api_keys SET revoked_at = $3 WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING id
     )
     SELECT count(*)::int AS n, pg_notify($4, $5) FROM revoked`,
    [tenantId, keyId, now, ...notify],
  );
  return (row?.n ?? 0) > 0;
}

/** The tenant row's lock serialises cap checks (keys, links) of one tenant across instances. */
export async function lockTenant(q: Querier, tenantId: string): Promise<boolean> {
  // NO KEY UPDATE: does not block the FOR KEY SHARE that foreign keys take on inserts.
  return (await one(q, 'SELECT 1 FROM tenants WHERE id = $1 FOR NO KEY UPDATE', [tenantId])) !== null;
}

export async function createApiKey(db: Database, key: ApiKeyRow, maxActive: number): Promise<boolean> {
  return db.tx(async (q) => {
    await lockTenant(q, key.tenantId);
    const { n } = (await one<{ n: number }>(
      q,
      'SELECT count(*) AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL',
      [key.tenantId],
    ))!;
    if (n >= maxActive) return false;
    await q.query(
      'INSERT INTO api_keys (id, tenant_id, hash, last4, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [key.id, key.tenantId, key.hash, key.last4, key.createdAt, key.revokedAt],
    );
    return true;
  });
}

export async function findApiKey(q: Querier, hash: string): Promise<{ key: ApiKeyRow; tenant: TenantRow } | null> {
  const row = await onePrepared<{ k: ApiKeyRecord; t: TenantRecord }>(
    q,
    `SELECT to_jsonb(k.*) AS k, to_jsonb(t.*) AS t
     FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id WHERE k.hash = $1 AND k.revoked_at IS NULL`,
    [hash],
  );
  return row ? { key: toApiKey(row.k), tenant: toTenant(row.t) } : null;
}

export async function getOrSetSetting(q: Querier, name: string, value: string): Promise<string> {
  // Two statements, no transaction needed: a concurrent first writer's insert makes ours wait,
  // and the SELECT (a new snapshot under READ COMMITTED) then sees whichever value won.
  await q.query('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, value]);
  return (await one<{ value: string }>(q, 'SELECT value FROM settings WHERE name = $1', [name]))!.value;
}

export async function addRequests(q: Querier, counts: readonly RequestDelta[]): Promise<number[]> {
  if (counts.length === 0) return [];
  // One statement for the whole batch: each upsert takes its row lock, so concurrent instances add
  // up exactly; a counter that does not exist yet (n = 0) reads as 0.
  const rows = await all<{ i: number; count: number }>(
    q,
    `WITH input AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS t(tenant_id, month, n, i)
     ), added AS (
       INSERT INTO usage_monthly (tenant_id, month, count)
       SELECT tenant_id, month, n FROM input WHERE n > 0
       ON CONFLICT (tenant_id, month) DO UPDATE SET count = usage_monthly.count + excluded.count
       RETURNING tenant_id, month, count
     )
     SELECT input.i::int AS i,
            COALESCE(added.count, usage_monthly.count, 0)::int AS count
     FROM input
     LEFT JOIN added ON added.tenant_id = input.tenant_id AND added.month = input.month
     LEFT JOIN usage_monthly ON usage_monthly.tenant_id = input.tenant_id AND usage_monthly.month = input.month
     ORDER BY input.i`,
    [counts.map((c) => c.tenantId), counts.map((c) => c.month), counts.map((c) => c.n)],
  );
  return rows.map((r) => r.count);
}

export async function getRequestCount(q: Querier, tenantId: string, month: string): Promise<number> {
  const row = await one<{ count: number }>(q, 'SELECT count FROM usage_monthly WHERE tenant_id = $1 AND month = $2', [
    tenantId,
    month,
  ]);
  return row?.count ?? 0;
}
