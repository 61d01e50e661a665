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

export const USERS = table<UserRow>()('users', 'id email password_hash tenant_id created_at');

export const BROWSER_SESSIONS = table<BrowserSessionRow>()('browser_sessions', 'id_hash user_id created_at expires_at');

export const CLIENTS = table<OAuthClientRow>()('oauth_clients', 'id name redirect_uris created_at', {
  redirect_uris: 'json',
});

export const GRANTS = table<OAuthGrantRow>()(
  'oauth_grants',
  'id tenant_id user_id client_id tier created_at updated_at revoked_at',
);

export const CODES = table<AuthCodeRow>()(
  'oauth_codes',
  'hash grant_id client_id redirect_uri code_challenge resource created_at expires_at used_at',
);

export const TOKENS = table<OAuthTokenRow>()(
  'oauth_tokens',
  'hash kind grant_id resource created_at expires_at used_at',
);
