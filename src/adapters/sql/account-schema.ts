import type { SchemaTypes } from './dialect.js';

/**
 * Migration 4: dashboard users, browser sessions and the OAuth state of the hosted MCP endpoint,
 * with the same choices as schema.ts (integer milliseconds, byte-ordered identifiers). Secrets
 * (session ids, codes, tokens) are stored only as hashes. `client_id` has no foreign key: the
 * fixed public client is not a row.
 */
export const accountsMigration = (t: SchemaTypes): string => `
  CREATE TABLE users (
    id ${t.id} PRIMARY KEY,
    email ${t.id} NOT NULL UNIQUE,
    password_hash ${t.text} NOT NULL,
    tenant_id ${t.id} NOT NULL REFERENCES tenants (id),
    created_at ${t.bigint} NOT NULL
  );
  CREATE INDEX users_by_tenant ON users (tenant_id);

  CREATE TABLE browser_sessions (
    id_hash ${t.id} PRIMARY KEY,
    user_id ${t.id} NOT NULL REFERENCES users (id),
    created_at ${t.bigint} NOT NULL,
    expires_at ${t.bigint} NOT NULL
  )${t.withoutRowid};
  CREATE INDEX browser_sessions_expiry ON browser_sessions (expires_at);

  CREATE TABLE oauth_clients (
    id ${t.id} PRIMARY KEY,
    name ${t.text} NOT NULL,
    redirect_uris ${t.text} NOT NULL,
    created_at ${t.bigint} NOT NULL
  );

  CREATE TABLE oauth_grants (
    id ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL REFERENCES tenants (id),
    user_id ${t.id} NOT NULL REFERENCES users (id),
    client_id ${t.id} NOT NULL,
    tier ${t.text} NOT NULL CHECK (tier IN ('read', 'write', 'destroy')),
    created_at ${t.bigint} NOT NULL,
    updated_at ${t.bigint} NOT NULL,
    revoked_at ${t.bigint}
  );
  CREATE UNIQUE INDEX oauth_grants_active ON oauth_grants (user_id, client_id) WHERE revoked_at IS NULL;

  CREATE TABLE oauth_codes (
    hash ${t.id} PRIMARY KEY,
    grant_id ${t.id} NOT NULL REFERENCES oauth_grants (id),
    client_id ${t.id} NOT NULL,
    redirect_uri ${t.text} NOT NULL,
    code_challenge ${t.text} NOT NULL,
    resource ${t.text} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    expires_at ${t.bigint} NOT NULL,
    used_at ${t.bigint}
  )${t.withoutRowid};
  CREATE INDEX oauth_codes_by_grant ON oauth_codes (grant_id);
  CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

  CREATE TABLE oauth_tokens (
    hash ${t.id} PRIMARY KEY,
    kind ${t.text} NOT NULL CHECK (kind IN ('access', 'refresh')),
    grant_id ${t.id} NOT NULL REFERENCES oauth_grants (id),
    resource ${t.text} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    expires_at ${t.bigint} NOT NULL,
    used_at ${t.bigint}
  )${t.withoutRowid};
  CREATE INDEX oauth_tokens_by_grant ON oauth_tokens (grant_id);
  CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
`;
