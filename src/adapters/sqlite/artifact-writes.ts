import type { ArtifactRow, InsertArtifactInput, InsertArtifactResult } from '../../ports/metadata-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import { artifactInsertValues } from '../shared/metadata-rows.js';
import type { Connection } from './database.js';
import { type ArtifactRecord, metadataIndexValue } from './rows.js';

/** The body of `insertArtifact`; runs inside the caller's write transaction. */
export function insertArtifactTx(c: Connection, input: InsertArtifactInput): InsertArtifactResult {
  const { artifact: a, idempotency } = input;
  if (a.status !== 'active' && a.status !== 'pending') {
    throw new Error(`insertArtifact takes an active or pending row, not '${a.status}'.`);
  }
  if (idempotency) {
    const prior = c.get<{ status: number; body: string }>(
      'SELECT status, body FROM idempotency WHERE tenant_id = ? AND key = ? AND created_at > ?',
      a.tenantId,
      idempotency.key,
      idempotency.notBefore,
    );
    if (prior) return { kind: 'replay', response: { status: prior.status, body: prior.body } };
  }
  checkNotSealed(c, a);
  // Every check that can refuse comes before the first write; a throw still rolls back everything.
  if (a.status === 'active') addLiveReference(c, a, input.storageLimitBytes);

  c.run(
    `INSERT INTO artifacts (id, tenant_id, filename, content_type, size_bytes, content_hash, metadata,
       session_id, agent_id, created_at, expires_at, deleted_at, status)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ...artifactInsertValues(a),
  );
  if (a.status === 'active') indexAndCount(c, a);
  if (idempotency) {
    c.run(
      `INSERT INTO idempotency (tenant_id, key, created_at, status, body, artifact_id) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, key) DO UPDATE SET created_at = excluded.created_at, status = excluded.status,
         body = excluded.body, artifact_id = excluded.artifact_id`,
      a.tenantId,
      idempotency.key,
      a.createdAt,
      idempotency.response.status,
      idempotency.response.body,
      a.id,
    );
  }
  return { kind: 'created', artifact: a };
}

/** What becoming active means beyond the blob reference: the metadata index and the session row. */
function indexAndCount(c: Connection, a: ArtifactRow): void {
  indexMetadata(c, a);
  if (a.sessionId === null) return;
  c.run(
    `INSERT INTO sessions (tenant_id, session_id, artifact_count, sealed_at, first_artifact_at, last_artifact_at)
     VALUES (?, ?, 1, NULL, ?, ?)
     ON CONFLICT (tenant_id, session_id) DO UPDATE SET
       artifact_count = artifact_count + 1,
       first_artifact_at = min(first_artifact_at, excluded.first_artifact_at),
       last_artifact_at = max(last_artifact_at, excluded.last_artifact_at)`,
    a.tenantId,
    a.sessionId,
    a.createdAt,
    a.createdAt,
  );
}

function checkNotSealed(c: Connection, a: ArtifactRow): void {
  if (a.sessionId === null) return;
  const session = c.get<{ sealed_at: number | null }>(
    'SELECT sealed_at FROM sessions WHERE tenant_id = ? AND session_id = ?',
    a.tenantId,
    a.sessionId,
  );
  if (session && session.sealed_at !== null) {
    throw new CairnError('session_sealed', `Session ${a.sessionId} is sealed; it accepts no more uploads.`);
  }
}

/**
 * pending → active for a completed presigned upload. It enters lists at completion time, so
 * `createdAt` moves to `now` and `expiresAt` keeps its TTL from there.
 */
export function activateArtifactTx(c: Connection, row: ArtifactRow, limit: number, now: number): ArtifactRow {
  if (row.status !== 'pending') return row;
  const a: ArtifactRow = {
    ...row,
    status: 'active',
    createdAt: now,
    expiresAt: row.expiresAt === null ? null : row.expiresAt + (now - row.createdAt),
  };
  checkNotSealed(c, a);
  addLiveReference(c, a, limit);
  c.run(
    "UPDATE artifacts SET status = 'active', created_at = ?, expires_at = ? WHERE id = ? AND status = 'pending'",
    a.createdAt,
    a.expiresAt,
    a.id,
  );
  indexAndCount(c, a);
  return a;
}

/** Counts one more active reference to the blob; its first one adds its size to the tenant's storage. */
function addLiveReference(c: Connection, a: ArtifactRow, limit: number): void {
  const blob = c.get<{ size_bytes: number; live_refs: number }>(
    'SELECT size_bytes, live_refs FROM blobs WHERE tenant_id = ? AND content_hash = ?',
    a.tenantId,
    a.contentHash,
  );
  const liveRefs = blob?.live_refs ?? 0;
  const size = blob?.size_bytes ?? a.sizeBytes;
  if (liveRefs === 0) {
    const tenant = c.get<{ storage_bytes: number }>('SELECT storage_bytes FROM tenants WHERE id = ?', a.tenantId);
    if (!tenant) throw new Error(`Unknown tenant ${a.tenantId}.`);
    if (tenant.storage_bytes + size > limit) {
      throw new CairnError('quota_exceeded', `Storage limit of ${limit} bytes would be exceeded.`);
    }
    c.run('UPDATE tenants SET storage_bytes = storage_bytes + ? WHERE id = ?', size, a.tenantId);
  }
  // The port asks callers to pin first; a missing row is still recorded rather than lost.
  c.run(
    `INSERT INTO blobs (tenant_id, content_hash, size_bytes, live_refs, orphaned_at, deleting_since, created_at)
     VALUES (?, ?, ?, 1, NULL, NULL, ?)
     ON CONFLICT (tenant_id, content_hash) DO UPDATE SET live_refs = live_refs + 1, orphaned_at = NULL`,
    a.tenantId,
    a.contentHash,
    size,
    a.createdAt,
  );
}

function indexMetadata(c: Connection, a: ArtifactRow): void {
  for (const [key, value] of Object.entries(a.metadata)) {
    const indexed = metadataIndexValue(value);
    if (indexed === null) continue;
    c.run(
      'INSERT INTO artifact_meta (artifact_id, key, tenant_id, value, created_at) VALUES (?, ?, ?, ?, ?)',
      a.id,
      key,
      a.tenantId,
      indexed,
      a.createdAt,
    );
  }
}

/**
 * Moves an active artifact to `deleted` or `expired` with every side effect: its blob reference
 * (and the tenant's bytes when it was the last), its session count, metadata index rows, links and
 * page. A row that is not active is left alone. Runs inside the caller's write transaction.
 */
export function retireArtifactTx(c: Connection, row: ArtifactRecord, to: 'deleted' | 'expired', now: number): boolean {
  // The conditional UPDATE decides: only the write that changed the row retires it.
  const changed = c.run(
    "UPDATE artifacts SET status = ?, deleted_at = ? WHERE id = ? AND status = 'active'",
    to,
    to === 'deleted' ? now : null,
    row.id,
  );
  if (changed === 0) return false;
  const blob = c.get<{ size_bytes: number; live_refs: number }>(
    'SELECT size_bytes, live_refs FROM blobs WHERE tenant_id = ? AND content_hash = ?',
    row.tenant_id,
    row.content_hash,
  );
  if (blob && blob.live_refs > 0) {
    c.run(
      'UPDATE blobs SET live_refs = live_refs - 1 WHERE tenant_id = ? AND content_hash = ?',
      row.tenant_id,
      row.content_hash,
    );
    if (blob.live_refs === 1) {
      c.run(
        'UPDATE tenants SET storage_bytes = max(0, storage_bytes - ?) WHERE id = ?',
        blob.size_bytes,
        row.tenant_id,
      );
    }
  }
  if (row.session_id !== null) {
    c.run(
      'UPDATE sessions SET artifact_count = max(0, artifact_count - 1) WHERE tenant_id = ? AND session_id = ?',
      row.tenant_id,
      row.session_id,
    );
  }
  c.run('DELETE FROM artifact_meta WHERE artifact_id = ?', row.id);
  c.run('DELETE FROM links WHERE artifact_id = ?', row.id);
  c.run('UPDATE pages SET live = 0, updated_at = ? WHERE artifact_id = ? AND live = 1', now, row.id);
  return true;
}

/** Removes an artifact row for good, with what still points at it. Its blob row is left to the orphan sweep. */
export function purgeArtifactTx(c: Connection, id: string): void {
  c.run('DELETE FROM artifact_meta WHERE artifact_id = ?', id);
  c.run('DELETE FROM links WHERE artifact_id = ?', id);
  c.run('DELETE FROM pages WHERE artifact_id = ?', id);
  c.run('DELETE FROM artifacts WHERE id = ?', id);
}
