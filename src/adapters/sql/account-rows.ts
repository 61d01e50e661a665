import type {
  AuthCodeRow,
  BrowserSessionRow,
  OAuthClientRow,
  OAuthGrantRow,
  OAuthTokenRow,
  UserRow,
} from '../../ports/account-store.js';
import { table } from './table.js';

/** The account tables as rows (src/ports/account-store.ts); see rows.ts. */

export const USERS = table<UserRow>()('users', {
  id: 'value',
  email: 'value',
  password_hash: 'value',
  tenant_id: 'value',
  created_at: 'value',
});

export const BROWSER_SESSIONS = table<BrowserSessionRow>()('browser_sessions', {
  id_hash: 'value',
  user_id: 'value',
  created_at: 'value',
  expires_at: 'value',
});

export const CLIENTS = table<OAuthClientRow>()('oauth_clients', {
  id: 'value',
  name: 'value',
  redirect_uris: 'json',
  created_at: 'value',
});

export const GRANTS = table<OAuthGrantRow>()('oauth_grants', {
  id: 'value',
  tenant_id: 'value',
  user_id: 'value',
  client_id: 'value',
  tier: 'value',
  created_at: 'value',
  updated_at: 'value',
  revoked_at: 'value',
});

export const CODES = table<AuthCodeRow>()('oauth_codes', {
  hash: 'value',
  grant_id: 'value',
  client_id: 'value',
  redirect_uri: 'value',
  code_challenge: 'value',
  resource: 'value',
  created_at: 'value',
  expires_at: 'value',
  used_at: 'value',
});

export const TOKENS = table<OAuthTokenRow>()('oauth_tokens', {
  hash: 'value',
  kind: 'value',
  grant_id: 'value',
  resource: 'value',
  created_at: 'value',
  expires_at: 'value',
  used_at: 'value',
});
