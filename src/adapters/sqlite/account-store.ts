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
  BROWSER_SESSION_COLUMNS,
  type BrowserSessionRecord,
  GRANT_COLUMNS,
  type OAuthClientRecord,
  type OAuthGrantRecord,
  type OAuthTokenRecord,
  TOKEN_COLUMNS,
  toBrowserSession,
  toClient,
  toCode,
  toGrant,
  toToken,
  toUser,
  USER_COLUMNS,
  type UserRecord,
} from '../shared/account-rows.js';
import { JoinedColumns, TENANT_COLUMNS, type TenantRecord, toTenant } from '../sql/rows.js';
import type { Connection } from './database.js';

const SESSION_PRINCIPAL = new JoinedColumns({ s: BROWSER_SESSION_COLUMNS, u: USER_COLUMNS, t: TENANT_COLUMNS });
const TOKEN_PRINCIPAL = new JoinedColumns({ k: TOKEN_COLUMNS, g: GRANT_COLUMNS, u: USER_COLUMNS, t: TENANT_COLUMNS });
const TOKEN_GRANT = new JoinedColumns({ k: TOKEN_COLUMNS, g: GRANT_COLUMNS });

const USER_TENANT = new JoinedColumns({ u: USER_COLUMNS, t: TENANT_COLUMNS });

const principalOf = <K extends string>(J: JoinedColumns<K | 'u' | 't'>, v: unknown[]): Principal => ({
  user: toUser(J.record<UserRecord>(v, 'u')!),
  tenant: toTenant(J.record<TenantRecord>(v, 't')!),
});

/** The AccountStore of the embedded set, on the metadata store's own SQLite connection. */
export class SqliteAccountStore implements AccountStore {
  constructor(private readonly c: Connection) {}

  async createUser(user: UserRow, newTenant: TenantRow | null): Promise<CreateUserResult> {
    return this.c.write(() => {
      if (this.c.get('SELECT 1 FROM users WHERE email = ?', user.email)) return 'email_taken';
      if (newTenant) {
        if (this.c.get('SELECT 1 FROM tenants WHERE name = ?', newTenant.name)) return 'tenant_name_taken';
        this.c.run(
          'INSERT INTO tenants (id, name, plan, suspended, created_at, storage_bytes) VALUES (?, ?, ?, ?, ?, ?)',
          newTenant.id,
          newTenant.name,
          newTenant.plan,
          newTenant.suspended ? 1 : 0,
          newTenant.createdAt,
          newTenant.storageBytes,
        );
      }
      this.c.run(
        'INSERT INTO users (id, email, password_hash, tenant_id, created_at) VALUES (?, ?, ?, ?, ?)',
        user.id,
        user.email,
        user.passwordHash,
        user.tenantId,
        user.createdAt,
      );
      return 'created';
    });
  }

  async getUserByEmail(email: string): Promise<Principal | null> {
    const v = this.c.getValues(
      USER_TENANT.select('FROM users AS u JOIN tenants AS t ON t.id = u.tenant_id WHERE u.email = ?'),
      email,
    );
    return v ? principalOf(USER_TENANT, v) : null;
  }

  async createBrowserSession(s: BrowserSessionRow): Promise<void> {
    this.c.write(() =>
      this.c.run(
        'INSERT INTO browser_sessions (id_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)',
        s.idHash,
        s.userId,
        s.createdAt,
        s.expiresAt,
      ),
    );
  }

  async getBrowserSession(idHash: string): Promise<(Principal & { session: BrowserSessionRow }) | null> {
    const J = SESSION_PRINCIPAL;
    const v = this.c.getValues(
      J.select(`FROM browser_sessions AS s JOIN users AS u ON u.id = s.user_id JOIN tenants AS t ON t.id = u.tenant_id
       WHERE s.id_hash = ?`),
      idHash,
    );
    if (!v) return null;
    return { ...principalOf(J, v), session: toBrowserSession(J.record<BrowserSessionRecord>(v, 's')!) };
  }

  async deleteBrowserSession(idHash: string): Promise<void> {
    this.c.write(() => this.c.run('DELETE FROM browser_sessions WHERE id_hash = ?', idHash));
  }

  async createClient(client: OAuthClientRow): Promise<void> {
    this.c.write(() =>
      this.c.run(
        'INSERT INTO oauth_clients (id, name, redirect_uris, created_at) VALUES (?, ?, ?, ?)',
        client.id,
        client.name,
        JSON.stringify(client.redirectUris),
        client.createdAt,
      ),
    );
  }

  async getClient(id: string): Promise<OAuthClientRow | null> {
    const row = this.c.get<OAuthClientRecord>('SELECT * FROM oauth_clients WHERE id = ?', id);
    return row ? toClient(row) : null;
  }

  async upsertGrant(
    g: Pick<OAuthGrantRow, 'id' | 'tenantId' | 'userId' | 'clientId' | 'tier'>,
    now: number,
  ): Promise<OAuthGrantRow> {
    return this.c.write(() => {
      const changed = this.c.run(
        'UPDATE oauth_grants SET tier = ?, updated_at = ? WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL',
        g.tier,
        now,
        g.userId,
        g.clientId,
      );
      if (changed === 0) {
        this.c.run(
          `INSERT INTO oauth_grants (id, tenant_id, user_id, client_id, tier, created_at, updated_at, revoked_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
          g.id,
          g.tenantId,
          g.userId,
          g.clientId,
          g.tier,
          now,
          now,
        );
      }
      return toGrant(
        this.c.get<OAuthGrantRecord>(
          'SELECT * FROM oauth_grants WHERE user_id = ? AND client_id = ? AND revoked_at IS NULL',
          g.userId,
          g.clientId,
        )!,
      );
    });
  }

  async getGrant(id: string): Promise<OAuthGrantRow | null> {
    const row = this.c.get<OAuthGrantRecord>('SELECT * FROM oauth_grants WHERE id = ?', id);
    return row ? toGrant(row) : null;
  }

  async listGrants(userId: string): Promise<(OAuthGrantRow & { clientName: string | null })[]> {
    return this.c
      .all<OAuthGrantRecord & { client_name: string | null }>(
        `SELECT g.*, c.name AS client_name FROM oauth_grants AS g LEFT JOIN oauth_clients AS c ON c.id = g.client_id
         WHERE g.user_id = ? AND g.revoked_at IS NULL ORDER BY g.updated_at DESC, g.id DESC`,
        userId,
      )
      .map((r) => ({ ...toGrant(r), clientName: r.client_name }));
  }

  async revokeGrant(userId: string, grantId: string, now: number): Promise<boolean> {
    return this.c.write(() => {
      const changed = this.c.run(
        'UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL',
        now,
        grantId,
        userId,
      );
      if (changed > 0) this.forgetGrantSecrets(grantId);
      return changed > 0;
    });
  }

  /** Codes and tokens of a revoked grant are worthless: drop them in the revoking transaction. */
  private forgetGrantSecrets(grantId: string): void {
    this.c.run('DELETE FROM oauth_codes WHERE grant_id = ?', grantId);
    this.c.run('DELETE FROM oauth_tokens WHERE grant_id = ?', grantId);
  }

  async createCode(code: AuthCodeRow): Promise<void> {
    this.c.write(() =>
      this.c.run(
        `INSERT INTO oauth_codes (hash, grant_id, client_id, redirect_uri, code_challenge, resource, created_at, expires_at, used_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        code.hash,
        code.grantId,
        code.clientId,
        code.redirectUri,
        code.codeChallenge,
        code.resource,
        code.createdAt,
        code.expiresAt,
        code.usedAt,
      ),
    );
  }

  async consumeCode(hash: string, now: number): Promise<{ code: AuthCodeRow; reused: boolean } | null> {
    return this.c.write(() => {
      const row = this.c.get<AuthCodeRecord>('SELECT * FROM oauth_codes WHERE hash = ?', hash);
      if (!row) return null;
      if (row.used_at !== null) return { code: toCode(row), reused: true };
      this.c.run('UPDATE oauth_codes SET used_at = ? WHERE hash = ?', now, hash);
      return { code: toCode({ ...row, used_at: now }), reused: false };
    });
  }

  async createTokens(tokens: OAuthTokenRow[]): Promise<void> {
    this.c.write(() => {
      for (const t of tokens) {
        this.c.run(
          `INSERT INTO oauth_tokens (hash, kind, grant_id, resource, created_at, expires_at, used_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
          t.hash,
          t.kind,
          t.grantId,
          t.resource,
          t.createdAt,
          t.expiresAt,
          t.usedAt,
        );
      }
    });
  }

  async findToken(
    hash: string,
    kind: TokenKind,
  ): Promise<(Principal & { token: OAuthTokenRow; grant: OAuthGrantRow }) | null> {
    const J = TOKEN_PRINCIPAL;
    const v = this.c.getValues(
      J.select(`FROM oauth_tokens AS k JOIN oauth_grants AS g ON g.id = k.grant_id
       JOIN users AS u ON u.id = g.user_id JOIN tenants AS t ON t.id = g.tenant_id
       WHERE k.hash = ? AND k.kind = ? AND g.revoked_at IS NULL`),
      hash,
      kind,
    );
    if (!v) return null;
    return {
      ...principalOf(J, v),
      token: toToken(J.record<OAuthTokenRecord>(v, 'k')!),
      grant: toGrant(J.record<OAuthGrantRecord>(v, 'g')!),
    };
  }

  async useRefreshToken(
    hash: string,
    now: number,
  ): Promise<{ token: OAuthTokenRow; grant: OAuthGrantRow; reused: boolean } | null> {
    return this.c.write(() => {
      const J = TOKEN_GRANT;
      const v = this.c.getValues(
        J.select(`FROM oauth_tokens AS k JOIN oauth_grants AS g ON g.id = k.grant_id
         WHERE k.hash = ? AND k.kind = 'refresh' AND g.revoked_at IS NULL`),
        hash,
      );
      if (!v) return null;
      const token = toToken(J.record<OAuthTokenRecord>(v, 'k')!);
      const grant = toGrant(J.record<OAuthGrantRecord>(v, 'g')!);
      if (token.usedAt !== null) return { token, grant, reused: true };
      this.c.run('UPDATE oauth_tokens SET used_at = ? WHERE hash = ?', now, hash);
      return { token: { ...token, usedAt: now }, grant, reused: false };
    });
  }

  async revokeGrantOfToken(hash: string, clientId: string, now: number): Promise<boolean> {
    return this.c.write(() => {
      const grant = this.c.get<{ id: string }>(
        `SELECT g.id FROM oauth_tokens AS k JOIN oauth_grants AS g ON g.id = k.grant_id
         WHERE k.hash = ? AND g.client_id = ? AND g.revoked_at IS NULL`,
        hash,
        clientId,
      );
      if (!grant) return false;
      this.c.run('UPDATE oauth_grants SET revoked_at = ? WHERE id = ?', now, grant.id);
      this.forgetGrantSecrets(grant.id);
      return true;
    });
  }

  async purgeExpired(now: number, batch: number): Promise<number> {
    return this.c.write(() => {
      let n = 0;
      for (const [table, key] of [
        ['browser_sessions', 'id_hash'],
        ['oauth_codes', 'hash'],
        ['oauth_tokens', 'hash'],
      ] as const) {
        n += this.c.run(
          `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE expires_at < ? LIMIT ?)`,
          now,
          batch,
        );
      }
      return n;
    });
  }
}
