import type { TenantRow } from './metadata-store.js';

/**
 * People and their connections: dashboard users, browser sessions, and the OAuth 2.1 state of the
 * hosted MCP endpoint (registered clients, grants, one-time codes, access and refresh tokens).
 *
 * Kept apart from MetadataStore because it is a different concern (who may act for a tenant, not
 * what the tenant stores); each metadata-store adapter provides one over the same database.
 * Every secret (session id, code, token) is stored only as its hash: the `hash` fields below are
 * hex SHA-256 values computed by the core, and the adapter never sees the secret itself.
 * All timestamps are integer milliseconds since the Unix epoch; every method is atomic.
 */

/** Permission tier of an OAuth grant; each includes the ones before it. */
export type { GrantTier } from '../shared/scopes.js';

import type { GrantTier } from '../shared/scopes.js';

export interface UserRow {
  id: string;
  /** Lowercased and trimmed: unique case-insensitively. */
  email: string;
  /** Argon2id PHC string. */
  passwordHash: string;
  tenantId: string;
  createdAt: number;
}

export interface BrowserSessionRow {
  idHash: string;
  userId: string;
  createdAt: number;
  expiresAt: number;
}

export interface OAuthClientRow {
  id: string;
  name: string;
  redirectUris: string[];
  createdAt: number;
}

export interface OAuthGrantRow {
  id: string;
  tenantId: string;
  userId: string;
  clientId: string;
  tier: GrantTier;
  createdAt: number;
  updatedAt: number;
  revokedAt: number | null;
}

export interface AuthCodeRow {
  hash: string;
  grantId: string;
  clientId: string;
  redirectUri: string;
  /** PKCE S256 challenge (base64url SHA-256 of the verifier). */
  codeChallenge: string;
  resource: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

export type TokenKind = 'access' | 'refresh';

export interface OAuthTokenRow {
  hash: string;
  kind: TokenKind;
  grantId: string;
  /** The RFC 8707 resource the token is bound to. */
  resource: string;
  createdAt: number;
  expiresAt: number;
  /** Refresh tokens: when it was exchanged (rotated). A second use is a replay. */
  usedAt: number | null;
}

/** A token or session together with who it acts for. */
export interface Principal {
  user: UserRow;
  tenant: TenantRow;
}

export type CreateUserResult = 'created' | 'email_taken' | 'tenant_name_taken';

export interface AccountStore {
  // --- users ---
  /**
   * Inserts the user, and `newTenant` first in the same transaction when given (sign-up), so a
   * failure leaves neither. Says which unique rule refused it, if one did.
   */
  createUser(user: UserRow, newTenant: TenantRow | null): Promise<CreateUserResult>;
  /** `email` as stored (lowercased). */
  getUserByEmail(email: string): Promise<Principal | null>;

  // --- browser sessions ---
  createBrowserSession(session: BrowserSessionRow): Promise<void>;
  /** The session with its user and tenant, whatever its expiry (the core checks it). */
  getBrowserSession(idHash: string): Promise<(Principal & { session: BrowserSessionRow }) | null>;
  deleteBrowserSession(idHash: string): Promise<void>;

  // --- OAuth clients (registered with RFC 7591) ---
  createClient(client: OAuthClientRow): Promise<void>;
  getClient(id: string): Promise<OAuthClientRow | null>;

  // --- grants: one active grant per (user, client) ---
  /**
   * Gives the active grant of (user, client) the tier `grant.tier`, creating it (with `grant.id`)
   * when there is none. Returns the grant after the change.
   */
  upsertGrant(
    grant: Pick<OAuthGrantRow, 'id' | 'tenantId' | 'userId' | 'clientId' | 'tier'>,
    now: number,
  ): Promise<OAuthGrantRow>;
  /** A grant by id, revoked or not. */
  getGrant(id: string): Promise<OAuthGrantRow | null>;
  /** The user's active grants, most recently updated first, with the registered client's name (null for clients not in the store). */
  listGrants(userId: string): Promise<(OAuthGrantRow & { clientName: string | null })[]>;
  /** Revokes the grant (the user's own only) and deletes its codes and tokens; false when there is no such active grant. */
  revokeGrant(userId: string, grantId: string, now: number): Promise<boolean>;

  // --- authorization codes ---
  createCode(code: AuthCodeRow): Promise<void>;
  /**
   * Marks the code used and returns it; `reused` when it had been used before (the row is
   * returned unchanged then). Null when unknown.
   */
  consumeCode(hash: string, now: number): Promise<{ code: AuthCodeRow; reused: boolean } | null>;

  // --- access and refresh tokens ---
  /** Inserts the tokens (an access token and its refresh token) in one transaction. */
  createTokens(tokens: OAuthTokenRow[]): Promise<void>;
  /** A token of an active grant, with the grant and who it acts for; null when unknown or its grant is revoked. */
  findToken(
    hash: string,
    kind: TokenKind,
  ): Promise<(Principal & { token: OAuthTokenRow; grant: OAuthGrantRow }) | null>;
  /**
   * Marks a refresh token used (rotation) and returns it with its grant; `reused` when it had
   * been used already (nothing changes then). Null when unknown or its grant is revoked.
   */
  useRefreshToken(
    hash: string,
    now: number,
  ): Promise<{ token: OAuthTokenRow; grant: OAuthGrantRow; reused: boolean } | null>;
  /**
   * Revokes the active grant a token (of any kind) belongs to, when that grant is `clientId`'s;
   * false when the token is unknown, its grant already revoked, or another client's.
   */
  revokeGrantOfToken(hash: string, clientId: string, now: number): Promise<boolean>;

  /** Deletes sessions, codes and tokens that expired before `now`; at most `batch` of each. */
  purgeExpired(now: number, batch: number): Promise<number>;
}
