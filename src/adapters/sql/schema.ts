import type { SchemaTypes } from './dialect.js';

/**
 * The metadata schema of both engines as versioned migrations: migration N is `MIGRATIONS[N - 1]`
 * spelled by an engine's SchemaTypes, applied and recorded by migrations.ts. Append new ones;
 * never edit a released one. The numbering is PostgreSQL's from before the schema was shared;
 * SQLite's own (see SQLITE_LEGACY_VERSIONS) lacked our 5, so its 5 is our 6.
 *
 * - Timestamps, sizes and counters are integer milliseconds/bytes, as the port speaks them, so
 *   nothing is converted and keyset comparisons stay exact.
 * - Metadata filters use a side table, `artifact_meta`, whose B-tree is in list order (a page is
 *   one index walk from the cursor); a GIN index finds matches but not in list order, so "newest
 *   50 with type=transcript" would fetch and sort every match.
 * - The list indexes are partial (`WHERE status = 'active'`): lists never see other rows.
 */
export const MIGRATIONS: readonly ((t: SchemaTypes) => string)[] = [
  (t) => `
  CREATE TABLE settings (
    name ${t.id} PRIMARY KEY,
    value ${t.text} NOT NULL
  )${t.withoutRowid};

  CREATE TABLE tenants (
    id ${t.id} PRIMARY KEY,
    name ${t.id} NOT NULL UNIQUE,
    plan ${t.text} NOT NULL,
    suspended ${t.bool} NOT NULL DEFAULT ${t.false},
    created_at ${t.bigint} NOT NULL,
    storage_bytes ${t.bigint} NOT NULL DEFAULT 0
  );

  CREATE TABLE api_keys (
    id ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL REFERENCES tenants (id),
    hash ${t.id} NOT NULL UNIQUE,
    last4 ${t.text} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    revoked_at ${t.bigint}
  );
  CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at, id);

  CREATE TABLE blobs (
    tenant_id ${t.id} NOT NULL,
    content_hash ${t.id} NOT NULL,
    size_bytes ${t.bigint} NOT NULL,
    live_refs ${t.int} NOT NULL DEFAULT 0,
    orphaned_at ${t.bigint},
    deleting_since ${t.bigint},
    created_at ${t.bigint} NOT NULL,
    PRIMARY KEY (tenant_id, content_hash)
  )${t.withoutRowid};
  -- Only blobs with no live reference can be orphans: the sweeper never scans the live ones.
  CREATE INDEX blobs_orphan_candidates ON blobs (created_at)
    WHERE live_refs = 0 AND orphaned_at IS NULL AND deleting_since IS NULL;
  CREATE INDEX blobs_orphaned ON blobs (orphaned_at)
    WHERE orphaned_at IS NOT NULL AND deleting_since IS NULL;
  CREATE INDEX blobs_deleting ON blobs (deleting_since) WHERE deleting_since IS NOT NULL;

  CREATE TABLE artifacts (
    id ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL REFERENCES tenants (id),
    filename ${t.id} NOT NULL,
    content_type ${t.id} NOT NULL,
    size_bytes ${t.bigint} NOT NULL,
    content_hash ${t.id} NOT NULL,
    metadata ${t.json} NOT NULL,
    session_id ${t.id},
    agent_id ${t.id},
    created_at ${t.bigint} NOT NULL,
    expires_at ${t.bigint},
    deleted_at ${t.bigint},
    status ${t.text} NOT NULL CHECK (status IN ('active', 'deleted', 'expired', 'pending'))
  );
  -- In list order, active rows only: a page is one forward walk from the cursor, with no sort.
  CREATE INDEX artifacts_list ON artifacts (tenant_id, created_at DESC, id DESC) WHERE status = 'active';
  CREATE INDEX artifacts_by_session ON artifacts (tenant_id, session_id, created_at DESC, id DESC)
    WHERE status = 'active';
  CREATE INDEX artifacts_by_agent ON artifacts (tenant_id, agent_id, created_at DESC, id DESC)
    WHERE status = 'active';
  CREATE INDEX artifacts_by_filename ON artifacts (tenant_id, filename, created_at DESC, id DESC)
    WHERE status = 'active';
  CREATE INDEX artifacts_by_type ON artifacts (tenant_id, content_type, created_at DESC, id DESC)
    WHERE status = 'active';
  -- Any status: orphan checks ask whether any row still names the bytes.
  CREATE INDEX artifacts_by_hash ON artifacts (tenant_id, content_hash);
  CREATE INDEX artifacts_expiring ON artifacts (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL;
  CREATE INDEX artifacts_deleted ON artifacts (deleted_at) WHERE status = 'deleted';
  CREATE INDEX artifacts_expired ON artifacts (expires_at) WHERE status = 'expired';

  -- One row per scalar top-level metadata key of an active artifact; value is its match form
  -- (see metadataMatchValue), short enough for a B-tree entry. tenant_id is always the
  -- artifact's own (written with it, never changed): list queries confine by it alone.
  CREATE TABLE artifact_meta (
    artifact_id ${t.id} NOT NULL,
    key ${t.id} NOT NULL,
    tenant_id ${t.id} NOT NULL,
    value ${t.id} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    PRIMARY KEY (artifact_id, key)
  )${t.withoutRowid};
  CREATE INDEX artifact_meta_lookup ON artifact_meta (tenant_id, key, value, created_at DESC, artifact_id DESC);

  CREATE TABLE idempotency (
    tenant_id ${t.id} NOT NULL,
    key ${t.id} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    status ${t.int} NOT NULL,
    body ${t.text} NOT NULL,
    artifact_id ${t.id},
    PRIMARY KEY (tenant_id, key)
  );
  CREATE INDEX idempotency_by_age ON idempotency (created_at);

  CREATE TABLE sessions (
    tenant_id ${t.id} NOT NULL,
    session_id ${t.id} NOT NULL,
    artifact_count ${t.int} NOT NULL DEFAULT 0,
    sealed_at ${t.bigint},
    first_artifact_at ${t.bigint} NOT NULL,
    last_artifact_at ${t.bigint} NOT NULL,
    PRIMARY KEY (tenant_id, session_id)
  )${t.withoutRowid};
  CREATE INDEX sessions_list ON sessions (tenant_id, last_artifact_at DESC, session_id DESC);

  CREATE TABLE links (
    id ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL,
    artifact_id ${t.id} NOT NULL REFERENCES artifacts (id),
    created_at ${t.bigint} NOT NULL,
    expires_at ${t.bigint} NOT NULL
  );
  CREATE INDEX links_by_tenant ON links (tenant_id, expires_at);
  CREATE INDEX links_by_artifact ON links (artifact_id);
  CREATE INDEX links_by_expiry ON links (expires_at);

  CREATE TABLE pages (
    slug ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL,
    artifact_id ${t.id} NOT NULL UNIQUE REFERENCES artifacts (id),
    visibility ${t.text} NOT NULL,
    access ${t.text} NOT NULL,
    title ${t.text},
    password_hash ${t.text},
    live ${t.bool} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    updated_at ${t.bigint} NOT NULL
  );

  CREATE TABLE usage_monthly (
    tenant_id ${t.id} NOT NULL,
    month ${t.id} NOT NULL,
    count ${t.bigint} NOT NULL,
    PRIMARY KEY (tenant_id, month)
  )${t.withoutRowid};
  `,
  // 2: abandoned presigned uploads are found without scanning every artifact.
  () => `
  CREATE INDEX artifacts_pending ON artifacts (created_at) WHERE status = 'pending';
  `,
  // 3: an operator takedown sticks: the owner cannot publish the page again until it is restored.
  (t) => `
  ALTER TABLE pages ADD COLUMN taken_down_at ${t.bigint};
  `,
  // 4: dashboard users, browser sessions and the OAuth state of the hosted MCP endpoint. Secrets
  // (session ids, codes, tokens) are stored only as hashes. `client_id` has no foreign key: the
  // fixed public client is not a row.
  (t) => `
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
`,
  // 5: list_sessions with created_after/created_before: a selective window is a range scan of
  // this index (then a sort of the few rows found) instead of filtering every session in order.
  () => `
  CREATE INDEX sessions_by_first ON sessions (tenant_id, first_artifact_at);
  `,
  // 6: resumable (tus) uploads: how far each has come, its pieces, and who may write to it now.
  // IF NOT EXISTS because a SQLite file at its own version 5 already has these (it gets 1-4, then
  // 5 and this one; see SQLITE_LEGACY_VERSIONS); everywhere else they do not exist yet.
  (t) => `
  CREATE TABLE IF NOT EXISTS resumable_uploads (
    id ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL,
    length_bytes ${t.bigint} NOT NULL,
    offset_bytes ${t.bigint} NOT NULL,
    segments ${t.text} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    expires_at ${t.bigint} NOT NULL,
    lease_owner ${t.id},
    lease_until ${t.bigint}
  );
  CREATE INDEX IF NOT EXISTS resumable_uploads_expiring ON resumable_uploads (expires_at);
  CREATE INDEX IF NOT EXISTS resumable_uploads_by_tenant ON resumable_uploads (tenant_id, expires_at);
  `,
  // 7: a revoked link keeps its row for a day, marked (and expired at its revoke), so revoking it
  // again answers its owner the same while another tenant's revoke of it is not-found.
  (t) => `
  ALTER TABLE links ADD COLUMN revoked_at ${t.bigint};
  `,
  // 8: the one upload that may write a blob's bytes, until writing_until: uploads of the same new
  // bytes on any instance take turns, so bytes once stored are never written again.
  (t) => `
  ALTER TABLE blobs ADD COLUMN writer ${t.id};
  ALTER TABLE blobs ADD COLUMN writing_until ${t.bigint};
  `,
  // 9: links to a whole (sealed) session's archive. Their own table, since a link row of `links`
  // names one artifact; the plan's cap and a revoke count both tables as one set of links.
  (t) => `
  CREATE TABLE session_links (
    id ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL,
    session_id ${t.id} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    expires_at ${t.bigint} NOT NULL,
    revoked_at ${t.bigint}
  );
  CREATE INDEX session_links_by_tenant ON session_links (tenant_id, expires_at);
  CREATE INDEX session_links_by_session ON session_links (tenant_id, session_id, created_at);
  CREATE INDEX session_links_by_expiry ON session_links (expires_at);
  `,
  // 10: the change feed. Each tenant's events are numbered 1, 2, 3, … by its row of event_heads,
  // which the writing transaction holds until it commits, so positions follow commit order and a
  // reader asking for those after N misses none. `data` is the row the event concerns, as JSON text.
  (t) => `
  CREATE TABLE event_heads (
    tenant_id ${t.id} PRIMARY KEY,
    last_seq ${t.bigint} NOT NULL
  )${t.withoutRowid};

  CREATE TABLE events (
    tenant_id ${t.id} NOT NULL,
    seq ${t.bigint} NOT NULL,
    type ${t.id} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    session_id ${t.id},
    data ${t.text} NOT NULL,
    PRIMARY KEY (tenant_id, seq)
  )${t.withoutRowid};
  CREATE INDEX events_by_session ON events (tenant_id, session_id, seq) WHERE session_id IS NOT NULL;
  CREATE INDEX events_by_age ON events (created_at);
  `,
  // 11: webhooks. Each endpoint keeps its own position in its tenant's feed (`cursor_seq`, the last
  // event delivered or skipped), so deliveries go in order and nothing is written per event on the
  // upload path; an instance delivers under a lease (`lease_owner` until `lease_until`), claimed
  // with SKIP LOCKED, and every write of a delivery is conditional on still holding it.
  (t) => `
  CREATE TABLE webhooks (
    id ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL REFERENCES tenants (id),
    url ${t.text} NOT NULL,
    types ${t.text},
    session_id ${t.id},
    secret ${t.text} NOT NULL,
    previous_secret ${t.text},
    previous_until ${t.bigint},
    status ${t.text} NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at ${t.bigint} NOT NULL,
    cursor_seq ${t.bigint} NOT NULL,
    attempts ${t.int} NOT NULL DEFAULT 0,
    failing_since ${t.bigint},
    next_attempt_at ${t.bigint} NOT NULL,
    disabled_at ${t.bigint},
    lease_owner ${t.id},
    lease_until ${t.bigint}
  );
  CREATE INDEX webhooks_by_tenant ON webhooks (tenant_id, created_at, id);
  CREATE INDEX webhooks_due ON webhooks (next_attempt_at) WHERE status = 'active';

  CREATE TABLE webhook_deliveries (
    id ${t.id} PRIMARY KEY,
    webhook_id ${t.id} NOT NULL,
    tenant_id ${t.id} NOT NULL,
    event_seq ${t.bigint} NOT NULL,
    event_type ${t.id} NOT NULL,
    attempt ${t.int} NOT NULL,
    delivered ${t.bool} NOT NULL,
    status_code ${t.int},
    error ${t.text},
    duration_ms ${t.int} NOT NULL,
    created_at ${t.bigint} NOT NULL
  );
  CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
  CREATE INDEX webhook_deliveries_by_age ON webhook_deliveries (created_at);
  `,
  // 12: sessions of the hosted MCP endpoint and what each subscribed to, where every instance of a
  // scale-out set sees them (a subscribe on one instance, the GET stream on another). A session
  // ends when idle (the sweeper), on DELETE /mcp, or when its tenant opens too many.
  (t) => `
  CREATE TABLE mcp_sessions (
    id ${t.id} PRIMARY KEY,
    tenant_id ${t.id} NOT NULL,
    principal_id ${t.id} NOT NULL,
    created_at ${t.bigint} NOT NULL,
    last_used_at ${t.bigint} NOT NULL
  )${t.withoutRowid};
  CREATE INDEX mcp_sessions_by_tenant ON mcp_sessions (tenant_id, last_used_at);
  CREATE INDEX mcp_sessions_idle ON mcp_sessions (last_used_at);

  CREATE TABLE mcp_subscriptions (
    session_id ${t.id} NOT NULL,
    uri ${t.text} NOT NULL,
    PRIMARY KEY (session_id, uri)
  )${t.withoutRowid};
  `,
];

/** The latest version: the one a database is at once every migration has been applied. */
export const LATEST_VERSION = MIGRATIONS.length;

/**
 * A SQLite file written before the schema was shared records its version only in
 * `PRAGMA user_version` (its own numbering, 1–5) and has no `schema_migrations` table. This maps
 * that version to the last migration of MIGRATIONS its schema holds in full, which is what gets
 * recorded for it; the ones after are then applied as for any database:
 * - 1–4 are the same four migrations in both numberings;
 * - SQLite's 5 (resumable uploads) is our 6, and SQLite never had our 5 (`sessions_by_first`):
 *   such a file counts as at 4, and gets 5, then 6, which finds its tables there already and
 *   leaves them (IF NOT EXISTS, the same definitions: the migration tests compare the schemas).
 */
export const SQLITE_LEGACY_VERSIONS: readonly number[] = [0, 1, 2, 3, 4, 4];

/** Where each database records the migrations applied to it, one row per version. */
export const schemaMigrationsTable = (t: SchemaTypes): string => `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    version ${t.int} PRIMARY KEY,
    applied_at ${t.timestamp} NOT NULL DEFAULT ${t.now}
  )`;
