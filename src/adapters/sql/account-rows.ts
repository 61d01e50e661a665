import type {
  AuthCodeRow,
  BrowserSessionRow,
  GrantTier,
  OAuthClientRow,
  OAuthGrantRow,
  OAuthTokenRow,
  TokenKind,
  UserRow,
} from '../../ports/account-store.js';

/**
 * Account rows as both engines return them: snake_case columns, integer milliseconds (pg's int8
 * is read as a number, see postgres/database.ts), redirect URIs as JSON text (a text column on
 * both). None has a boolean or a jsonb column, so no mapper needs to tell the engines apart.
 */

export interface UserRecord {
  id: string;
  email: string;
  password_hash: string;
  tenant_id: string;
  created_at: number;
}

export interface BrowserSessionRecord {
  id_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
}

export interface OAuthClientRecord {
  id: string;
  name: string;
  redirect_uris: string;
  created_at: number;
}

export interface OAuthGrantRecord {
  id: string;
  tenant_id: string;
  user_id: string;
  client_id: string;
  tier: string;
  created_at: number;
  updated_at: number;
  revoked_at: number | null;
}

export interface AuthCodeRecord {
  hash: string;
  grant_id: string;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface OAuthTokenRecord {
  hash: string;
  kind: string;
  grant_id: string;
  resource: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export const USER_COLUMNS = ['id', 'email', 'password_hash', 'tenant_id', 'created_at'] as const;
export const BROWSER_SESSION_COLUMNS = ['id_hash', 'user_id', 'created_at', 'expires_at'] as const;
export const CLIENT_COLUMNS = ['id', 'name', 'redirect_uris', 'created_at'] as const;
export const GRANT_COLUMNS = [
  'id',
  'tenant_id',
  'user_id',
  'client_id',
  'tier',
  'created_at',
  'updated_at',
  'revoked_at',
] as const;
export const CODE_COLUMNS = [
  'hash',
  'grant_id',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'resource',
  'created_at',
  'expires_at',
  'used_at',
] as const;
export const TOKEN_COLUMNS = ['hash', 'kind', 'grant_id', 'resource', 'created_at', 'expires_at', 'used_at'] as const;

export const toUser = (r: UserRecord): UserRow => ({
  id: r.id,
  email: r.email,
  passwordHash: r.password_hash,
  tenantId: r.tenant_id,
  createdAt: r.created_at,
});

export const toBrowserSession = (r: BrowserSessionRecord): BrowserSessionRow => ({
  idHash: r.id_hash,
  userId: r.user_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

export const toClient = (r: OAuthClientRecord): OAuthClientRow => ({
  id: r.id,
  name: r.name,
  redirectUris: JSON.parse(r.redirect_uris) as string[],
  createdAt: r.created_at,
});

export const toGrant = (r: OAuthGrantRecord): OAuthGrantRow => ({
  id: r.id,
  tenantId: r.tenant_id,
  userId: r.user_id,
  clientId: r.client_id,
  tier: r.tier as GrantTier,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  revokedAt: r.revoked_at,
});

export const toCode = (r: AuthCodeRecord): AuthCodeRow => ({
  hash: r.hash,
  grantId: r.grant_id,
  clientId: r.client_id,
  redirectUri: r.redirect_uri,
  codeChallenge: r.code_challenge,
  resource: r.resource,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
});

export const toToken = (r: OAuthTokenRecord): OAuthTokenRow => ({
  hash: r.hash,
  kind: r.kind as TokenKind,
  grantId: r.grant_id,
  resource: r.resource,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
});
