/**
 * Migration 3: dashboard users, browser sessions and the OAuth state of the hosted MCP endpoint.
 * Secrets (session ids, codes, tokens) are stored only as hashes. `client_id` has no foreign key:
 * the fixed public client is not a row.
 */
export const ACCOUNTS_MIGRATION = `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created_at INTEGER NOT NULL
  );
  CREATE INDEX users_by_tenant ON users (tenant_id);

  CREATE TABLE browser_sessions (
    id_hash TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX browser_sessions_expiry ON browser_sessions (expires_at);

  CREATE TABLE oauth_clients (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    redirect_uris TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );

  CREATE TABLE oauth_grants (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    client_id TEXT NOT NULL,
    tier TEXT NOT NULL CHECK (tier IN ('read', 'write', 'destroy')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE UNIQUE INDEX oauth_grants_active ON oauth_grants (user_id, client_id) WHERE revoked_at IS NULL;

  CREATE TABLE oauth_codes (
    hash TEXT PRIMARY KEY,
    grant_id TEXT NOT NULL REFERENCES oauth_grants(id),
    client_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    code_challenge TEXT NOT NULL,
    resource TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
  ) WITHOUT ROWID;
  CREATE INDEX oauth_codes_by_grant ON oauth_codes (grant_id);
  CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

  CREATE TABLE oauth_tokens (
    hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id TEXT NOT NULL REFERENCES oauth_grants(id),
    resource TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
  ) WITHOUT ROWID;
  CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);
  CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
`;
