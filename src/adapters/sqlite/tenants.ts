import type { ApiKeyRow, RequestDelta, TenantRow } from '../../ports/metadata-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import type { PlanName } from '../../shared/plan-name.js';
import type { Connection } from './database.js';
import {
  API_KEY_COLUMNS,
  type ApiKeyRecord,
  JoinedColumns,
  TENANT_COLUMNS,
  type TenantRecord,
  toApiKey,
  toTenant,
} from './rows.js';

/** Tenants, API keys, settings and the monthly request counter. */

export function getTenant(c: Connection, id: string): TenantRow | null {
  const row = c.get<TenantRecord>('SELECT * FROM tenants WHERE id = ?', id);
  return row ? toTenant(row) : null;
}

export function createTenant(c: Connection, t: TenantRow): TenantRow {
  return c.write(() => {
    if (c.get('SELECT 1 FROM tenants WHERE name = ?', t.name)) {
      throw new CairnError('invalid_request', `A tenant named '${t.name}' already exists.`);
    }
    c.run(
      'INSERT INTO tenants (id, name, plan, suspended, created_at, storage_bytes) VALUES (?, ?, ?, ?, ?, ?)',
      t.id,
      t.name,
      t.plan,
      t.suspended ? 1 : 0,
      t.createdAt,
      t.storageBytes,
    );
    return getTenant(c, t.id)!;
  });
}

export function updateTenant(
  c: Connection,
  id: string,
  change: { plan?: PlanName; suspended?: boolean },
): TenantRow | null {
  return c.write(() => {
    if (change.plan !== undefined) c.run('UPDATE tenants SET plan = ? WHERE id = ?', change.plan, id);
    if (change.suspended !== undefined)
      c.run('UPDATE tenants SET suspended = ? WHERE id = ?', change.suspended ? 1 : 0, id);
    return getTenant(c, id);
  });
}

export function createApiKey(c: Connection, key: ApiKeyRow, maxActive: number): boolean {
  return c.write(() => {
    const { n } = c.get<{ n: number }>(
      'SELECT count(*) AS n FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL',
      key.tenantId,
    )!;
    if (n >= maxActive) return false;
    c.run(
      'INSERT INTO api_keys (id, tenant_id, hash, last4, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)',
      key.id,
      key.tenantId,
      key.hash,
      key.last4,
      key.createdAt,
      key.revokedAt,
    );
    return true;
  });
}

const KEY_TENANT = new JoinedColumns({ k: API_KEY_COLUMNS, t: TENANT_COLUMNS });
const FIND_API_KEY = `SELECT ${KEY_TENANT.list}
  FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id WHERE k.hash = ? AND k.revoked_at IS NULL`;

export function findApiKey(c: Connection, hash: string): { key: ApiKeyRow; tenant: TenantRow } | null {
  const v = c.getValues(FIND_API_KEY, hash);
  if (!v) return null;
  return {
    key: toApiKey(KEY_TENANT.record<ApiKeyRecord>(v, 'k')!),
    tenant: toTenant(KEY_TENANT.record<TenantRecord>(v, 't')!),
  };
}

export function getOrSetSetting(c: Connection, name: string, value: string): string {
  return c.write(() => {
    c.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', name, value);
    return c.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', name)!.value;
  });
}

export function addRequests(c: Connection, counts: readonly RequestDelta[]): number[] {
  return c.write(() =>
    counts.map(({ tenantId, month, n }) => {
      if (n > 0) {
        c.run(
          `INSERT INTO usage_monthly (tenant_id, month, count) VALUES (?, ?, ?)
           ON CONFLICT (tenant_id, month) DO UPDATE SET count = count + excluded.count`,
          tenantId,
          month,
          n,
        );
      }
      return getRequestCount(c, tenantId, month);
    }),
  );
}

export function getRequestCount(c: Connection, tenantId: string, month: string): number {
  return (
    c.get<{ count: number }>('SELECT count FROM usage_monthly WHERE tenant_id = ? AND month = ?', tenantId, month)
      ?.count ?? 0
  );
}
