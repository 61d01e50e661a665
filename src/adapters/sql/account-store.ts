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
import { BROWSER_SESSIONS, CLIENTS, CODES, GRANTS, TOKENS, USERS } from './account-rows.js';
import { TENANTS } from './rows.js';
import type { SqlDriver } from './runner.js';
import { Joined, type Stored } from './table.js';
import { insertTenant } from './tenants.js';
import { one, row, run, type Work } from './work.js';

const GRANT = GRANTS.list;
const CODE = CODES.list;

const USER_TENANT = new Joined({ u: USERS, t: TENANTS });
const USER_BY_EMAIL = `SELECT ${USER_TENANT.list}
  FROM users AS u JOIN tenants AS t ON t.id = u.tenant_id WHERE u.email = ?`;
const SESSION_PRINCIPAL = new Joined({ s: BROWSER_SESSIONS, u: USERS, t: TENANTS });
const GET_SESSION = `SELECT ${SESSION_PRINCIPAL.list}
  FROM browser_sessions AS s JOIN users AS u ON u.id = s.user_id JOIN tenants AS t ON t.id = u.tenant_id
  WHERE s.id_hash = ?`;
const TOKEN_PRINCIPAL = new Joined({ k: TOKENS, g: GRANTS, u: USERS, t: TENANTS });
const FIND_TOKEN = `SELECT ${TOKEN_PRINCIPAL.list}
  FROM oauth_tokens AS k JOIN oauth_grants AS g ON g.id = k.grant_id
  JOIN users AS u ON u.id = g.user_id JOIN tenants AS t ON t.id = g.tenant_id
  WHERE k.hash = ? AND k.kind = ? AND g.revoked_at IS NULL`;
const TOKEN_GRANT = new Joined({ k: TOKENS, g: GRANTS });
const REFRESH_TOKEN = `SELECT ${TOKEN_GRANT.list} FROM oauth_tokens AS k JOIN oauth_grants AS g ON g.id = k.grant_id
  WHERE k.hash = ? AND k.kind = 'refresh' AND g.revoked_at IS NULL`;

const EMAIL_TAKEN = 'SELECT 1 AS taken FROM users WHERE email = ?';
const INSERT_USER = `${USERS.insert}
  ON CONFLICT (email) DO NOTHING RETURNING id`;
const GET_CLIENT = `SELECT ${CLIENTS.list} FROM oauth_clients WHERE id = ?`;
const GET_GRANT = `SELECT ${GRANT} FROM oauth_grants WHERE id = ?`;
const LIST_GRANTS = `SELECT ${GRANTS.qualified('g')}, c.name AS client_name
  FROM oauth_grants AS g LEFT JOIN oauth_clients AS c ON c.id = g.client_id
  WHERE g.user_id = ? AND g.revoked_at IS NULL ORDER BY g.updated_at DESC, g.id DESC`;
const UPSERT_GRANT = `INSERT INTO oauth_grants (${GRANT}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)
  ON CONFLICT (user_id, client_id) WHERE revoked_at IS NULL
  DO UPDATE SET tier = excluded.tier, updated_at = excluded.updated_at
  RETURNING ${GRANT}`;
const USE_CODE = `UPDATE oauth_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL RETURNING ${CODE}`;
const GET_CODE = `SELECT ${CODE} FROM oauth_codes WHERE hash = ?`;
/** Tables whose rows end at `expires_at`, with their keys. */
const EXPIRING = [
  ['browser_sessions', 'id_hash'],
  ['oauth_codes', 'hash'],
  ['oauth_tokens', 'hash'],
] as const;

const principalOf = (J: Joined<{ u: typeof USERS; t: typeof TENANTS }>, v: unknown[]): Principal => ({
  user: J.read(v, 'u')!,
  tenant: J.read(v, 't')!,
});

/** Thrown inside a transaction to roll it back and report which unique rule refused the insert. */
class Refused extends Error {
  constructor(readonly result: CreateUserResult) {
    super(result);
  }
}

/**
 * Users, browser sessions and OAuth state, on the metadata store's connection or pool. Races
 * between instances are settled by unique constraints (ON CONFLICT) and conditional statements,
 * which SQLite, holding the whole database for each write, settles the same way.
 */
export class SqlAccountStore implements AccountStore {
  constructor(private readonly sql: SqlDriver) {}

  async createUser(user: UserRow, newTenant: TenantRow | null): Promise<CreateUserResult> {
    try {
      return await this.sql.write(function* (): Work<CreateUserResult> {
        if (newTenant && !(yield* insertTenant(newTenant))) {
          // Nothing inserted yet. A taken email is named first, whichever rule refused.
          return (yield* one(EMAIL_TAKEN, [user.email])) ? 'email_taken' : 'tenant_name_taken';
        }
        const inserted = yield* one(INSERT_USER, USERS.values(user));
        // Throwing rolls back the tenant inserted above.
        if (!inserted) throw new Refused('email_taken');
        return 'created';
      });
    } catch (err) {
      if (err instanceof Refused) return err.result;
      throw err;
    }
  }

  async getUserByEmail(email: string): Promise<Principal | null> {
    const v = await this.sql.row(USER_BY_EMAIL, [email]);
    return v ? principalOf(USER_TENANT, v) : null;
  }

  async createBrowserSession(s: BrowserSessionRow): Promise<void> {
    await this.sql.run(BROWSER_SESSIONS.insert, BROWSER_SESSIONS.values(s));
  }

  async getBrowserSession(idHash: string): Promise<(Principal & { session: BrowserSessionRow }) | null> {
    const J = SESSION_PRINCIPAL;
    const v = await this.sql.row(GET_SESSION, [idHash]);
    if (!v) return null;
    return { ...principalOf(J, v), session: J.read(v, 's')! };
  }

  async deleteBrowserSession(idHash: string): Promise<void> {
    await this.sql.run('DELETE FROM browser_sessions WHERE id_hash = ?', [idHash]);
  }

  async createClient(client: OAuthClientRow): Promise<void> {
    await this.sql.run(CLIENTS.insert, CLIENTS.values(client));
  }

  async getClient(id: string): Promise<OAuthClientRow | null> {
    return CLIENTS.read(await this.sql.one<Stored>(GET_CLIENT, [id]));
  }

  async upsertGrant(
    g: Pick<OAuthGrantRow, 'id' | 'tenantId' | 'userId' | 'clientId' | 'tier'>,
    now: number,
  ): Promise<OAuthGrantRow> {
    // One statement: the partial unique index (one active grant per user and client) decides
    // between concurrent consents, and the loser updates the winner's row.
    const r = await this.sql.change<Stored>(UPSERT_GRANT, [g.id, g.tenantId, g.userId, g.clientId, g.tier, now, now]);
    return GRANTS.read(r!);
  }

  async getGrant(id: string): Promise<OAuthGrantRow | null> {
    return GRANTS.read(await this.sql.one<Stored>(GET_GRANT, [id]));
  }

  async listGrants(userId: string): Promise<(OAuthGrantRow & { clientName: string | null })[]> {
    const rows = await this.sql.all<Stored & { client_name: string | null }>(LIST_GRANTS, [userId]);
    return rows.map((r) => ({ ...GRANTS.read(r), clientName: r.client_name }));
  }

  async revokeGrant(userId: string, grantId: string, now: number): Promise<boolean> {
    return this.sql.write(function* () {
      const revoked = yield* run(
        'UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND user_id = ? AND revoked_at IS NULL',
        [now, grantId, userId],
      );
      if (revoked > 0) yield* forgetGrantSecrets(grantId);
      return revoked > 0;
    });
  }

  async createCode(code: AuthCodeRow): Promise<void> {
    await this.sql.run(CODES.insert, CODES.values(code));
  }

  async consumeCode(hash: string, now: number): Promise<{ code: AuthCodeRow; reused: boolean } | null> {
    return this.sql.write(function* () {
      // The conditional UPDATE decides: of two concurrent uses exactly one marks the code.
      const used = yield* one<Stored>(USE_CODE, [now, hash]);
      if (used) return { code: CODES.read(used), reused: false };
      const before = yield* one<Stored>(GET_CODE, [hash]);
      return before ? { code: CODES.read(before), reused: true } : null;
    });
  }

  async createTokens(tokens: OAuthTokenRow[]): Promise<void> {
    await this.sql.write(function* () {
      for (const t of tokens) {
        yield* run(TOKENS.insert, TOKENS.values(t));
      }
    });
  }

  async findToken(
    hash: string,
    kind: TokenKind,
  ): Promise<(Principal & { token: OAuthTokenRow; grant: OAuthGrantRow }) | null> {
    const J = TOKEN_PRINCIPAL;
    const v = await this.sql.row(FIND_TOKEN, [hash, kind]);
    if (!v) return null;
    return { ...principalOf(J, v), token: J.read(v, 'k')!, grant: J.read(v, 'g')! };
  }

  async useRefreshToken(
    hash: string,
    now: number,
  ): Promise<{ token: OAuthTokenRow; grant: OAuthGrantRow; reused: boolean } | null> {
    return this.sql.write(function* () {
      // The conditional UPDATE is the rotation: of two concurrent uses exactly one sees a fresh
      // token. A revocation deletes the token, so it waits for this transaction's row lock.
      const rotated = yield* run(
        `UPDATE oauth_tokens SET used_at = ?
         WHERE hash = ? AND kind = 'refresh' AND used_at IS NULL
           AND grant_id IN (SELECT id FROM oauth_grants WHERE revoked_at IS NULL)`,
        [now, hash],
      );
      const v = yield* row(REFRESH_TOKEN, [hash]);
      if (!v) return null;
      return { token: TOKEN_GRANT.read(v, 'k')!, grant: TOKEN_GRANT.read(v, 'g')!, reused: rotated === 0 };
    });
  }

  async revokeGrantOfToken(hash: string, clientId: string, now: number): Promise<boolean> {
    return this.sql.write(function* () {
      const grant = yield* one<{ id: string }>(
        `UPDATE oauth_grants SET revoked_at = ?
         WHERE id = (SELECT grant_id FROM oauth_tokens WHERE hash = ?) AND client_id = ? AND revoked_at IS NULL
         RETURNING id`,
        [now, hash, clientId],
      );
      if (grant) yield* forgetGrantSecrets(grant.id);
      return grant !== null;
    });
  }

  async purgeExpired(now: number, batch: number): Promise<number> {
    const lock = this.sql.dialect.skipLocked;
    return this.sql.write(function* () {
      let n = 0;
      // Rows another instance is purging are skipped, not waited for.
      for (const [table, key] of EXPIRING) {
        n += yield* run(
          `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE expires_at < ? LIMIT ?${lock})`,
          [now, batch],
        );
      }
      return n;
    });
  }
}

/** Codes and tokens of a revoked grant are worthless: drop them in the revoking transaction. */
function* forgetGrantSecrets(grantId: string): Work<void> {
  yield* run('DELETE FROM oauth_codes WHERE grant_id = ?', [grantId]);
  yield* run('DELETE FROM oauth_tokens WHERE grant_id = ?', [grantId]);
}
