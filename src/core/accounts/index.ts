import { createHmac } from 'node:crypto';
import type { AccountStore } from '../../ports/account-store.js';
import type { Core } from '../index.js';
import { Argon2idHasher } from '../passwords.js';
import { BrowserSessionService } from './browser-sessions.js';
import { OAuthAuthorizeService } from './oauth-authorize.js';
import { OAuthClientService } from './oauth-clients.js';
import { OAuthTokenService } from './oauth-tokens.js';
import { Tagger } from './secrets.js';
import { UserService } from './users.js';

/** People acting for tenants: dashboard accounts and sessions, and the OAuth 2.1 server of the hosted MCP endpoint. */
export interface Accounts {
  store: AccountStore;
  users: UserService;
  sessions: BrowserSessionService;
  clients: OAuthClientService;
  authorize: OAuthAuthorizeService;
  tokens: OAuthTokenService;
}

/** Built beside the core by the composition root, over the same ports (clock, limiter, origins). */
export function createAccounts(core: Core, store: AccountStore): Accounts {
  const { deps } = core;
  // CSRF tags get a key of their own, derived from the content-token secret (itself derived from the instance secret).
  const csrfKey = createHmac('sha256', deps.tokenSecret).update('dashboard-csrf').digest('base64url');
  const clients = new OAuthClientService(deps, store);
  return {
    store,
    users: new UserService(deps, store, new Argon2idHasher()),
    sessions: new BrowserSessionService(deps, store, new Tagger(csrfKey)),
    clients,
    authorize: new OAuthAuthorizeService(deps, store, clients),
    tokens: new OAuthTokenService(deps, store),
  };
}

export { SCOPE_OF, TIER_LABEL, TIERS, tierCovers } from '../../shared/scopes.js';
export type { BrowserSession } from './browser-sessions.js';
export { mcpResourceOf } from './oauth-authorize.js';
export { PUBLIC_CLIENT_ID, PUBLIC_CLIENT_NAME } from './oauth-clients.js';
export { OAuthError } from './oauth-errors.js';
