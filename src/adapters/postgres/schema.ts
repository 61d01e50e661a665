import { ACCOUNTS_MIGRATION } from './account-schema.js';

/**
 * Versioned migrations, recorded in `schema_migrations`. Append new ones; never edit a released one.
 *
 * Choices, and why:
 * - Timestamps, sizes and counters are `bigint` milliseconds/bytes: the port speaks integer ms,
 *   so there is no conversion to get wrong, and ordering/keyset comparisons stay exact.
 * - Identifier and label columns use `COLLATE "C"`: byte order, the same as the SQLite adapter,
 *   so `created_at DESC, id DESC` ties break identically on both engines, whatever the
 *   database's locale; C comparisons are also the cheapest.
 * - `metadata` is `jsonb` (keys come back in jsonb's order, not the upload's). Filtering uses a
 *   side table, `artifact_meta`, not a GIN index: a GIN index finds the matching rows but not in
 *   list order, so "newest 50 with type=transcript" would fetch and sort every match. The side
 *   table's B-tree is in list order, so a page is one index walk from the cursor (see
 *   list-queries.ts for the verified plans).
 * - The list indexes are partial (`WHERE status = 'active'`): lists never see other rows, and
 *   deleted/expired rows do not bloat the walk.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE settings (
    name text COLLATE "C" PRIMARY KEY,
    value text NOT NULL
  );

  CREATE TABLE tenants (
    id text COLLATE "C" PRIMARY KEY,
    name text COLLATE "C" NOT NULL UNIQUE,
    plan text NOT NULL,
    suspended boolean NOT NULL DEFAULT false,
    created_at bigint NOT NULL,
    storage_bytes bigint NOT NULL DEFAULT 0
  );

  CREATE TABLE api_keys (
    id text COLLATE "C" PRIMARY KEY,
    tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
    hash text COLLATE "C" NOT NULL UNIQUE,
    last4 text NOT NULL,
    created_at bigint NOT NULL,
    revoked_at bigint
  );
  CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, created_at, id);

  CREATE TABLE blobs (
    tenant_id text COLLATE "C" NOT NULL,
    content_hash text COLLATE "C" NOT NULL,
    size_bytes bigint NOT NULL,
    live_refs integer NOT NULL DEFAULT 0,
    orphaned_at bigint,
    deleting_since bigint,
    created_at bigint NOT NULL,
    PRIMARY KEY (tenant_id, content_hash)
  );
  -- Only blobs with no live reference can be orphans: the sweeper never scans the live ones.
  CREATE INDEX blobs_orphan_candidates ON blobs (created_at)
    WHERE live_refs = 0 AND orphaned_at IS NULL AND deleting_since IS NULL;
  CREATE INDEX blobs_orphaned ON blobs (orphaned_at) WHERE orphaned_at IS NOT NULL AND deleting_since IS NULL;
  CREATE INDEX blobs_deleting ON blobs (deleting_since) WHERE deleting_since IS NOT NULL;

  CREATE TABLE artifacts (
    id text COLLATE "C" PRIMARY KEY,
    tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id),
    filename text COLLATE "C" NOT NULL,
    content_type text COLLATE "C" NOT NULL,
    size_bytes bigint NOT NULL,
    content_hash text COLLATE "C" NOT NULL,
    metadata jsonb NOT NULL,
    session_id text COLLATE "C",
    agent_id text COLLATE "C",
    created_at bigint NOT NULL,
    expires_at bigint,
    deleted_at bigint,
    status text NOT NULL CHECK (status IN ('active', 'deleted', 'expired', 'pending'))
  );
  -- In list order, active rows only: a page is one walk from the cursor, with no sort.
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
  -- (see rows.ts: metadataMatchValue), short enough for a B-tree entry.
  CREATE TABLE artifact_meta (
    artifact_id text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    tenant_id text COLLATE "C" NOT NULL,
    value text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (artifact_id, key)
  );
  CREATE INDEX artifact_meta_lookup ON artifact_meta (tenant_id, key, value, created_at DESC, artifact_id DESC);

  CREATE TABLE idempotency (
    tenant_id text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL,
    status integer NOT NULL,
    body text NOT NULL,
    artifact_id text COLLATE "C",
    PRIMARY KEY (tenant_id, key)
  );
  CREATE INDEX idempotency_by_age ON idempotency (created_at);

  CREATE TABLE sessions (
    tenant_id text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    artifact_count integer NOT NULL DEFAULT 0,
    sealed_at bigint,
    first_artifact_at bigint NOT NULL,
    last_artifact_at bigint NOT NULL,
    PRIMARY KEY (tenant_id, session_id)
  );
  CREATE INDEX sessions_list ON sessions (tenant_id, last_artifact_at DESC, session_id DESC);

  CREATE TABLE links (
    id text COLLATE "C" PRIMARY KEY,
    tenant_id text COLLATE "C" NOT NULL,
    artifact_id text COLLATE "C" NOT NULL REFERENCES artifacts (id),
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL
  );
  CREATE INDEX links_by_tenant ON links (tenant_id, expires_at);
  CREATE INDEX links_by_artifact ON links (artifact_id);
  CREATE INDEX links_by_expiry ON links (expires_at);

  CREATE TABLE pages (
    slug text COLLATE "C" PRIMARY KEY,
    tenant_id text COLLATE "C" NOT NULL,
    artifact_id text COLLATE "C" NOT NULL UNIQUE REFERENCES artifacts (id),
    visibility text NOT NULL,
    access text NOT NULL,
    title text,
    password_hash text,
    live boolean NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  );

  CREATE TABLE usage_monthly (
    tenant_id text COLLATE "C" NOT NULL,
    month text COLLATE "C" NOT NULL,
    count bigint NOT NULL,
    PRIMARY KEY (tenant_id, month)
  );
  `,
  // 2: abandoned presigned uploads are found without scanning every artifact.
  `
  CREATE INDEX artifacts_pending ON artifacts (created_at) WHERE status = 'pending';
  `,
  // 3: an operator takedown sticks: the owner cannot publish the page again until it is restored.
  `
  ALTER TABLE pages ADD COLUMN taken_down_at bigint;
  `,
  // 4: users, browser sessions and OAuth (hosted MCP).
  ACCOUNTS_MIGRATION,
  // 5: list_sessions with created_after/created_before: a selective window is a range scan of
  // this index (then a sort of the few rows found) instead of filtering every session in order.
  `
  CREATE INDEX sessions_by_first ON sessions (tenant_id, first_artifact_at);
  `,
  // 6: resumable (tus) uploads: how far each has come, its pieces, and who may write to it now.
  `
  CREATE TABLE resumable_uploads (
    id text COLLATE "C" PRIMARY KEY,
    tenant_id text COLLATE "C" NOT NULL,
    length_bytes bigint NOT NULL,
    offset_bytes bigint NOT NULL,
    segments text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    lease_owner text COLLATE "C",
    lease_until bigint
  );
  CREATE INDEX resumable_uploads_expiring ON resumable_uploads (expires_at);
  CREATE INDEX resumable_uploads_by_tenant ON resumable_uploads (tenant_id, expires_at);
  `,
];
