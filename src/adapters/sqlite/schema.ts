import { ACCOUNTS_MIGRATION } from './account-schema.js';

/**
 * Versioned migrations. `PRAGMA user_version` records the last one applied; each runs once, inside
 * the same immediate transaction that reads the version, so concurrent starters apply it once.
 * Append new migrations; never edit a released one.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE tenants (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL,
    suspended INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    storage_bytes INTEGER NOT NULL DEFAULT 0
  );

  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    hash TEXT NOT NULL UNIQUE,
    last4 TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at, id);

  CREATE TABLE blobs (
    tenant_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    live_refs INTEGER NOT NULL DEFAULT 0,
    orphaned_at INTEGER,
    deleting_since INTEGER,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, content_hash)
  ) WITHOUT ROWID;
  -- Only blobs with no live reference can be orphans: the sweeper never scans the live ones.
  CREATE INDEX blobs_orphan_candidates ON blobs (created_at)
    WHERE live_refs = 0 AND orphaned_at IS NULL AND deleting_since IS NULL;
  CREATE INDEX blobs_orphaned ON blobs (orphaned_at)
    WHERE orphaned_at IS NOT NULL AND deleting_since IS NULL;
  CREATE INDEX blobs_deleting ON blobs (deleting_since) WHERE deleting_since IS NOT NULL;

  CREATE TABLE artifacts (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    metadata TEXT NOT NULL,
    session_id TEXT,
    agent_id TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    deleted_at INTEGER,
    status TEXT NOT NULL CHECK (status IN ('active', 'deleted', 'expired', 'pending'))
  );
  -- List indexes hold active rows only, in list order, so a page is one forward index walk.
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

  -- One row per scalar top-level metadata key of an active artifact.
  CREATE TABLE artifact_meta (
    artifact_id TEXT NOT NULL,
    key TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (artifact_id, key)
  ) WITHOUT ROWID;
  CREATE INDEX artifact_meta_lookup ON artifact_meta (tenant_id, key, value, created_at DESC, artifact_id DESC);

  CREATE TABLE idempotency (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    artifact_id TEXT,
    PRIMARY KEY (tenant_id, key)
  );
  CREATE INDEX idempotency_by_age ON idempotency (created_at);

  CREATE TABLE sessions (
    tenant_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    artifact_count INTEGER NOT NULL DEFAULT 0,
    sealed_at INTEGER,
    first_artifact_at INTEGER NOT NULL,
    last_artifact_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, session_id)
  ) WITHOUT ROWID;
  CREATE INDEX sessions_list ON sessions (tenant_id, last_artifact_at DESC, session_id DESC);

  CREATE TABLE links (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    artifact_id TEXT NOT NULL REFERENCES artifacts(id),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX links_by_tenant ON links (tenant_id, expires_at);
  CREATE INDEX links_by_artifact ON links (artifact_id);
  CREATE INDEX links_by_expiry ON links (expires_at);

  CREATE TABLE pages (
    slug TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    artifact_id TEXT NOT NULL UNIQUE REFERENCES artifacts(id),
    visibility TEXT NOT NULL,
    access TEXT NOT NULL,
    title TEXT,
    password_hash TEXT,
    live INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );

  CREATE TABLE usage_monthly (
    tenant_id TEXT NOT NULL,
    month TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, month)
  ) WITHOUT ROWID;
  `,
  // 2: abandoned presigned uploads are found without scanning every artifact.
  `
  CREATE INDEX artifacts_pending ON artifacts (created_at) WHERE status = 'pending';
  `,
  // 3: an operator takedown sticks: the owner cannot publish the page again until it is restored.
  `
  ALTER TABLE pages ADD COLUMN taken_down_at INTEGER;
  `,
  // 4: users, browser sessions and OAuth (hosted MCP).
  ACCOUNTS_MIGRATION,
  // 5: resumable (tus) uploads: how far each has come, its pieces, and who may write to it now.
  `
  CREATE TABLE resumable_uploads (
    id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    length_bytes INTEGER NOT NULL,
    offset_bytes INTEGER NOT NULL,
    segments TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    lease_owner TEXT,
    lease_until INTEGER
  );
  CREATE INDEX resumable_uploads_expiring ON resumable_uploads (expires_at);
  CREATE INDEX resumable_uploads_by_tenant ON resumable_uploads (tenant_id, expires_at);
  `,
];
