/**
 * Migration 3: dashboard users, browser sessions and the OAuth state of the hosted MCP endpoint,
 * with the same choices as schema.ts (bigint milliseconds, `COLLATE "C"` identifiers). Secrets
 * are stored only as hashes. `client_id` has no foreign key: the fixed public client is not a row.
 */
export const ACCOUNTS_MIGRATION = `
  CREATE TABLE users (
    id text COLLATE "C" PRIMARY KEY,
    email text COLLATE "C" NOT NULL UNIQUE,
    password_hash text NOT NULL,
    tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
    created_at bigint NOT NULL
  );
  CREATE INDEX users_by_tenant ON users (tenant_id);

  CREATE TABLE browser_sessions (
    id_hash text COLLATE "C" PRIMARY KEY,
    user_id text COLLATE "C" NOT NULL REFERENCES users (id),
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
  );
  CREATE INDEX browser_sessions_expiry ON browser_sessions (expires_at);

  CREATE TABLE oauth_clients (
    id text COLLATE "C" PRIMARY KEY,
    name text NOT NULL,
    redirect_uris text NOT NULL,
    created_at bigint NOT NULL
  );

  CREATE TABLE oauth_grants (
    id text COLLATE "C" PRIMARY KEY,
    tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
    user_id text COLLATE "C" NOT NULL REFERENCES users (id),
    client_id text COLLATE "C" NOT NULL,
    tier text NOT NULL CHECK (tier IN ('read', 'write', 'destroy')),
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    revoked_at bigint
  );
  CREATE UNIQUE INDEX oauth_grants_active ON oauth_grants (user_id, client_id) WHERE revoked_at IS NULL;

  CREATE TABLE oauth_codes (
    hash text COLLATE "C" PRIMARY KEY,
    grant_id text COLLATE "C" NOT NULL REFERENCES oauth_grants (id),
    client_id text COLLATE "C" NOT NULL,
    redirect_uri text NOT NULL,
    code_challenge text NOT NULL,
    resource text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    used_at bigint
  );
  CREATE INDEX oauth_codes_by_grant ON oauth_codes (grant_id);
  CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

  CREATE TABLE oauth_tokens (
    hash text COLLATE "C" PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id text COLLATE "C" NOT NULL REFERENCES oauth_grants (id),
    resource text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    used_at bigint
  );
  CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);
  CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
`;
