import type {
  AccountStore,
  AuthCodeRow,
  BrowserSessionRow,
  CreateUserResult,
  OAuthClientRow,
  OAuthGrantRow,
  OAuthTokenRow,
  Principal,
  TokenKind,
  UserRow,
} from '../../ports/account-store.js';
import type { TenantRow } from '../../ports/metadata-store.js';
import {
  type AuthCodeRecord,
  type BrowserSessionRecord,
  type OAuthClientRecord,
  type OAuthGrantRecord,
  type OAuthTokenRecord,
  toBrowserSession,
  toClient,
  toCode,
  toGrant,
  toToken,
  toUser,
  type UserRecord,
} from '../shared/account-rows.js';
import { type TenantRecord, toTenant } from '../sql/rows.js';
import { all, type Database, one, type Querier } from './database.js';

interface PrincipalRecord {
  u: UserRecord;
  t: TenantRecord;
}

const principalOf = (r: PrincipalRecord): Principal => ({ user: toUser(r.u), tenant: toTenant(r.t) });

/** Thrown inside a transaction to roll it back and report which unique rule refused the insert. */
class Refused extends Error {
  constructor(readonly result: CreateUserResult) {
    super(result);
  }
}

/**
 * The AccountStore of the scale-out set, on the metadata store's pool. Races between instances
 * are settled by unique constraints and single conditional statements, as in store.ts.
 */
export class PostgresAccountStore implements AccountStore {
  constructor(private readonly db: Database) {}

  private get q(): Querier {
    return this.db.pool;
  }

  async createUser(user: UserRow, newTenant: TenantRow | null): Promise<CreateUserResult> {
    try {
      return await this.db.tx(async (q) => {
        if (newTenant) {
          const created = await one(
            q,
            `INSERT INTO tenants (id, name, plan, suspended, created_at, storage_bytes) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (name) DO NOTHING RETURNING id`,
            [
              newTenant.id,
              newTenant.name,
              newTenant.plan,
              newTenant.suspended,
              newTenant.createdAt,
              newTenant.storageBytes,
            ],
          );
          if (!created) throw new Refused('tenant_name_taken');
        }
        const inserted = await one(
          q,
          `INSERT INTO users (id, email, password_hash, tenant_id, created_at) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (email) DO NOTHING RETURNING id`,
          [user.id, user.email, user.passwordHash, user.tenantId, user.createdAt],
        );
        if (!inserted) throw new Refused('email_taken');
        return 'created' as const;
      });
    } catch (err) {
      if (err instanceof Refused) return err.result;
      throw err;
    }
  }

  async getUserByEmail(email: string): Promise<Principal | null> {
    const row = await one<PrincipalRecord>(
      this.q,
      'SELECT to_jsonb(u.*) AS u, to_jsonb(t.*) AS t FROM users AS u JOIN tenants AS t ON t.id = u.tenant_id WHERE u.email = $1',
      [email],
    );
    return row ? principalOf(row) : null;
  }

  async createBrowserSession(s: BrowserSessionRow): Promise<void> {
    await this.q.query(
      'INSERT INTO browser_sessions (id_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)',
      [s.idHash, s.userId, s.createdAt, s.expiresAt],
    );
  }

  async getBrowserSession(idHash: string): Promise<(Principal & { session: BrowserSessionRow }) | null> {
    const row = await one<PrincipalRecord & { s: BrowserSessionRecord }>(
      this.q,
      `SELECT to_jsonb(s.*) AS s, to_jsonb(u.*) AS u, to_jsonb(t.*) AS t
       FROM browser_sessions AS s JOIN users AS u ON u.id = s.user_id JOIN tenants AS t ON t.id = u.tenant_id
       WHERE s.id_hash = $1`,
      [idHash],
    );
    return row ? { ...principalOf(row), session: toBrowserSession(row.s) } : null;
  }

  async deleteBrowserSession(idHash: string): Promise<void> {
    await this.q.query('DELETE FROM browser_sessions WHERE id_hash = $1', [idHash]);
  }

  async createClient(client: OAuthClientRow): Promise<void> {
    await this.q.query('INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES ($1, $2, $3, $4)', [
      client.id,
      client.name,
      JSON.stringify(client.redirectUris),
      client.createdAt,
    ]);
  }

  async getClient(id: string): Promise<OAuthClientRow | null> {
    const row = await one<OAuthClientRecord>(this.q, 'SELECT * FROM oauth_clients WHERE id = $1', [id]);
    return row ? toClient(row) : null;
  }

  async upsertGrant(
    g: Pick<OAuthGrantRow, 'id' | 'tenantId' | 'userId' | 'clientId' | 'tier'>,
    now: number,
  ): Promise<OAuthGrantRow> {
    // One statement: the partial unique index (one active grant per user and client) decides
    // between concurrent consents, and the loser updates the winner's row.
    const row = await one<OAuthGrantRecord>(
      this.q,
      `INSERT INTO oauth_grants (id, tenant_id, user_id, client_id, tier, created_at, updated_at, revoked_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6, NULL)
       ON CONFLICT (user_id, client_id) WHERE revoked_at IS NULL
       DO UPDATE SET tier = EXCLUDED.tier, updated_at = EXCLUDED.updated_at
       RETURNING *`,
      [g.id, g.tenantId, g.userId, g.clientId, g.tier, now],
    );
    return toGrant(row!);
  }

  async getGrant(id: string): Promise<OAuthGrantRow | null> {
    const row = await one<OAuthGrantRecord>(this.q, 'SELECT * FROM oauth_grants WHERE id = $1', [id]);
    return row ? toGrant(row) : null;
  }

  async listGrants(userId: string): Promise<(OAuthGrantRow & { clientName: string | null })[]> {
    const rows = await all<OAuthGrantRecord & { client_name: string | null }>(
      this.q,
      `SELECT g.*, c.name AS client_name FROM oauth_grants AS g LEFT JOIN oauth_clients AS c ON c.id = g.client_id
       WHERE g.user_id = $1 AND g.revoked_at IS NULL ORDER BY g.updated_at DESC, g.id DESC`,
      [userId],
    );
    return rows.map((r) => ({ ...toGrant(r), clientName: r.client_name }));
  }

  async revokeGrant(userId: string, grantId: string, now: number): Promise<boolean> {
    return this.db.tx(async (q) => {
      const row = await one(
        q,
        'UPDATE oauth_grants SET revoked_at = $3 WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id',
        [grantId, userId, now],
      );
      if (row) await forgetGrantSecrets(q, grantId);
      return row !== null;
    });
  }

  async createCode(code: AuthCodeRow): Promise<void> {
    await this.q.query(
      `INSERT INTO oauth_codes (hash, grant_id, client_id, redirect_uri, code_challenge, resource, created_at, expires_at, used_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        code.hash,
        code.grantId,
        code.clientId,
        code.redirectUri,
        code.codeChallenge,
        code.resource,
        code.createdAt,
        code.expiresAt,
        code.usedAt,
      ],
    );
  }

  async consumeCode(hash: string, now: number): Promise<{ code: AuthCodeRow; reused: boolean } | null> {
    const used = await one<AuthCodeRecord>(
      this.q,
      'UPDATE oauth_codes SET used_at = $2 WHERE hash = $1 AND used_at IS NULL RETURNING *',
      [hash, now],
    );
    if (used) return { code: toCode(used), reused: false };
    const before = await one<AuthCodeRecord>(this.q, 'SELECT * FROM oauth_codes WHERE hash = $1', [hash]);
    return before ? { code: toCode(before), reused: true } : null;
  }

  async createTokens(tokens: OAuthTokenRow[]): Promise<void> {
    await this.db.tx(async (q) => {
      for (const t of tokens) {
        await q.query(
          `INSERT INTO oauth_tokens (hash, kind, grant_id, resource, created_at, expires_at, used_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [t.hash, t.kind, t.grantId, t.resource, t.createdAt, t.expiresAt, t.usedAt],
        );
      }
    });
  }

  async findToken(
    hash: string,
    kind: TokenKind,
  ): Promise<(Principal & { token: OAuthTokenRow; grant: OAuthGrantRow }) | null> {
    const row = await one<PrincipalRecord & { k: OAuthTokenRecord; g: OAuthGrantRecord }>(
      this.q,
      `SELECT to_jsonb(k.*) AS k, to_jsonb(g.*) AS g, to_jsonb(u.*) AS u, to_jsonb(t.*) AS t
       FROM oauth_tokens AS k JOIN oauth_grants AS g ON g.id = k.grant_id
       JOIN users AS u ON u.id = g.user_id JOIN tenants AS t ON t.id = g.tenant_id
       WHERE k.hash = $1 AND k.kind = $2 AND g.revoked_at IS NULL`,
      [hash, kind],
    );
    return row ? { ...principalOf(row), token: toToken(row.k), grant: toGrant(row.g) } : null;
  }

  async useRefreshToken(
    hash: string,
    now: number,
  ): Promise<{ token: OAuthTokenRow; grant: OAuthGrantRow; reused: boolean } | null> {
    // The conditional UPDATE is the rotation: of two concurrent uses exactly one sees a fresh token.
    const used = await one<{ k: OAuthTokenRecord; g: OAuthGrantRecord }>(
      this.q,
      `UPDATE oauth_tokens AS k SET used_at = $2 FROM oauth_grants AS g
       WHERE k.hash = $1 AND k.kind = 'refresh' AND k.used_at IS NULL AND g.id = k.grant_id AND g.revoked_at IS NULL
       RETURNING to_jsonb(k.*) AS k, to_jsonb(g.*) AS g`,
      [hash, now],
    );
    if (used) return { token: toToken(used.k), grant: toGrant(used.g), reused: false };
    const before = await one<{ k: OAuthTokenRecord; g: OAuthGrantRecord }>(
      this.q,
      `SELECT to_jsonb(k.*) AS k, to_jsonb(g.*) AS g FROM oauth_tokens AS k JOIN oauth_grants AS g ON g.id = k.grant_id
       WHERE k.hash = $1 AND k.kind = 'refresh' AND g.revoked_at IS NULL`,
      [hash],
    );
    return before ? { token: toToken(before.k), grant: toGrant(before.g), reused: true } : null;
  }

  async revokeGrantOfToken(hash: string, clientId: string, now: number): Promise<boolean> {
    return this.db.tx(async (q) => {
      const row = await one<{ id: string }>(
        q,
        `UPDATE oauth_grants AS g SET revoked_at = $3 FROM oauth_tokens AS k
         WHERE k.hash = $1 AND g.id = k.grant_id AND g.client_id = $2 AND g.revoked_at IS NULL RETURNING g.id`,
        [hash, clientId, now],
      );
      if (row) await forgetGrantSecrets(q, row.id);
      return row !== null;
    });
  }

  async purgeExpired(now: number, batch: number): Promise<number> {
    let n = 0;
    for (const [table, key] of [
      ['browser_sessions', 'id_hash'],
      ['oauth_codes', 'hash'],
      ['oauth_tokens', 'hash'],
    ] as const) {
      const result = await this.q.query(
        `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE expires_at < $1 LIMIT $2)`,
        [now, batch],
      );
      n += result.rowCount ?? 0;
    }
    return n;
  }
}

/** Codes and tokens of a revoked grant are worthless: drop them in the revoking transaction. */
async function forgetGrantSecrets(q: Querier, grantId: string): Promise<void> {
  await q.query('DELETE FROM oauth_codes WHERE grant_id = $1', [grantId]);
  await q.query('DELETE FROM oauth_tokens WHERE grant_id = $1', [grantId]);
}
