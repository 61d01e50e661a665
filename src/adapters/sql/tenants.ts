import type { ApiKeyRow, RequestDelta, TenantRow, TenantStore } from '../../ports/metadata-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import type { PlanName } from '../../shared/plan-name.js';
import type { Dialect } from './dialect.js';
import { API_KEYS, summed, TENANTS } from './rows.js';
import type { SqlDriver } from './runner.js';
import { Joined, type Stored } from './table.js';
import { all, one, run, type Work } from './work.js';

const TENANT = TENANTS.list;
const API_KEY = API_KEYS.list;
const GET_TENANT = `SELECT ${TENANT} FROM tenants WHERE id = ?`;
const KEY_TENANT = new Joined({ k: API_KEYS, t: TENANTS });
const FIND_API_KEY = `SELECT ${KEY_TENANT.list}
  FROM api_keys AS k JOIN tenants AS t ON t.id = k.tenant_id WHERE k.hash = ? AND k.revoked_at IS NULL`;

/** How an engine tells every process that credentials changed (see TenantStore.credentialsEpoch). */
export interface CredentialsSignal {
  current(): number | null;
  /** A change made through this process: moves the epoch at once. */
  changed(): void;
  /** Run inside the transaction that changes credentials (PostgreSQL: a NOTIFY sent on commit). */
  announce(): Work<void>;
}

/**
 * Tenants, API keys, settings and the monthly request counters; the root of the SQL metadata
 * store, one class per port, each extending the one before (tenants → artifacts → sharing →
 * sweeper), so one object on one connection or pool implements every port with no facade.
 */
export class SqlTenantStore implements TenantStore {
  constructor(
    protected readonly sql: SqlDriver,
    protected readonly credentials: CredentialsSignal,
  ) {}

  protected get d() {
    return this.sql.dialect;
  }

  async getOrSetSetting(name: string, value: string): Promise<string> {
    return this.sql.write(function* () {
      yield* run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [name, value]);
      return (yield* one<{ value: string }>('SELECT value FROM settings WHERE name = ?', [name]))!.value;
    });
  }

  async createTenant(t: TenantRow): Promise<TenantRow> {
    const row = await this.sql.write(() => insertTenant(t));
    if (!row) throw new CairnError('invalid_request', `A tenant named '${t.name}' already exists.`);
    return TENANTS.read(row);
  }

  async getTenant(id: string): Promise<TenantRow | null> {
    return TENANTS.read(await this.sql.one<Stored>(GET_TENANT, [id]));
  }

  async getTenantByName(name: string): Promise<TenantRow | null> {
    return TENANTS.read(await this.sql.one<Stored>(`SELECT ${TENANT} FROM tenants WHERE name = ?`, [name]));
  }

  async listTenants(): Promise<TenantRow[]> {
    return (await this.sql.all<Stored>(`SELECT ${TENANT} FROM tenants ORDER BY created_at, id`, [])).map((r) =>
      TENANTS.read(r),
    );
  }

  async updateTenant(id: string, change: { plan?: PlanName; suspended?: boolean }): Promise<TenantRow | null> {
    const announce = () => this.credentials.announce();
    const row = await this.changingCredentials(() =>
      this.sql.write(function* () {
        const updated = yield* one<Stored>(
          `UPDATE tenants SET plan = coalesce(?, plan), suspended = coalesce(?, suspended) WHERE id = ? RETURNING ${TENANT}`,
          [change.plan ?? null, change.suspended ?? null, id],
        );
        if (updated) yield* announce();
        return updated;
      }),
    );
    return row ? TENANTS.read(row) : null;
  }

  async createApiKey(key: ApiKeyRow, maxActive: number): Promise<boolean> {
    const d = this.d;
    return this.sql.write(function* () {
      // The tenant row's lock serialises cap checks of one tenant across instances.
      yield* lockTenant(d.forNoKeyUpdate, key.tenantId);
      const { n } = (yield* one<{ n: number }>(
        'SELECT count(*) AS n FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL',
        [key.tenantId],
      ))!;
      if (n >= maxActive) return false;
      yield* run(API_KEYS.insert, API_KEYS.values(key));
      return true;
    });
  }

  async findApiKey(hash: string): Promise<{ key: ApiKeyRow; tenant: TenantRow } | null> {
    const v = await this.sql.row(FIND_API_KEY, [hash]);
    if (!v) return null;
    return { key: KEY_TENANT.read(v, 'k')!, tenant: KEY_TENANT.read(v, 't')! };
  }

  async listApiKeys(tenantId: string): Promise<ApiKeyRow[]> {
    const sql = `SELECT ${API_KEY} FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id`;
    return (await this.sql.all<Stored>(sql, [tenantId])).map((r) => API_KEYS.read(r));
  }

  async revokeApiKey(tenantId: string, keyId: string, now: number): Promise<boolean> {
    const announce = () => this.credentials.announce();
    return this.changingCredentials(() =>
      this.sql.write(function* () {
        const revoked = yield* run(
          'UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL',
          [now, tenantId, keyId],
        );
        if (revoked > 0) yield* announce();
        return revoked > 0;
      }),
    );
  }

  credentialsEpoch(): number | null {
    return this.credentials.current();
  }

  /**
   * The epoch moves before the change (a lookup that started before it and ends after it is kept
   * under the old epoch, which no later request asks for) and after it (this process's own
   * notification may arrive after its next request).
   */
  private async changingCredentials<T>(change: () => Promise<T>): Promise<T> {
    this.credentials.changed();
    try {
      return await change();
    } finally {
      this.credentials.changed();
    }
  }

  async addRequests(counts: readonly RequestDelta[]): Promise<number[]> {
    if (counts.length === 0) return [];
    const d = this.d;
    // One statement adds to every counter and returns each total right after its own addition
    // (each upsert is atomic, so concurrent instances add up exactly and each sees its own
    // running total), in (tenant, month) order so that two instances queue rather than
    // deadlock; counters asked with n = 0 are only read.
    const rows = summed(counts.map((c) => [c.tenantId, c.month, c.n]));
    const toAdd = rows.filter((r) => r[2] > 0);
    const toRead = rows.filter((r) => r[2] === 0);
    const totals = await this.sql.write(function* () {
      const added = toAdd.length > 0 ? yield* all<Total>(ADD_REQUESTS(d), [JSON.stringify(toAdd)]) : [];
      const read = toRead.length > 0 ? yield* all<Total>(READ_REQUESTS(d), [JSON.stringify(toRead)]) : [];
      return [...added, ...read];
    });
    const byKey = new Map(totals.map((t) => [`${t.tenant_id}\u0000${t.month}`, t.count]));
    return counts.map((c) => byKey.get(`${c.tenantId}\u0000${c.month}`) ?? 0);
  }

  async getRequestCount(tenantId: string, month: string): Promise<number> {
    return (await this.sql.one<{ count: number }>(REQUEST_COUNT, [tenantId, month]))?.count ?? 0;
  }
}

const REQUEST_COUNT = 'SELECT count FROM usage_monthly WHERE tenant_id = ? AND month = ?';
type Total = { tenant_id: string; month: string; count: number };
const ADD_REQUESTS = (d: Dialect) => `INSERT INTO usage_monthly (tenant_id, month, count)
  SELECT j.value ->> 0, j.value ->> 1, CAST(j.value ->> 2 AS BIGINT) FROM ${d.jsonRows} WHERE TRUE
  ON CONFLICT (tenant_id, month) DO UPDATE SET count = usage_monthly.count + excluded.count
  RETURNING tenant_id, month, count`;
const READ_REQUESTS = (d: Dialect) => `SELECT tenant_id, month, count FROM usage_monthly
  WHERE (tenant_id, month) IN (SELECT j.value ->> 0, j.value ->> 1 FROM ${d.jsonRows})`;

const INSERT_TENANT = `${TENANTS.insert} ON CONFLICT (name) DO NOTHING RETURNING ${TENANT}`;

/** Inserts the tenant; null when its name is taken (the unique name decides between concurrent creators). */
export function insertTenant(t: TenantRow): Work<Stored | null> {
  return one<Stored>(INSERT_TENANT, TENANTS.values(t));
}

/** Locks the tenant row (PostgreSQL; NO KEY UPDATE does not block the FOR KEY SHARE of foreign keys). */
export function* lockTenant(lock: string, tenantId: string): Work<boolean> {
  return (yield* one(`SELECT 1 AS found FROM tenants WHERE id = ?${lock}`, [tenantId])) !== null;
}
