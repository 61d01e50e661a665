import type { ArtifactRow, InsertArtifactInput, InsertArtifactResult } from '../../ports/metadata-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import type { Dialect } from './dialect.js';
import { appendEvents, artifactEvent, type NewEvent, pageEvent } from './events.js';
import { ARTIFACTS, assertStorableMetadata, metadataIndexValue, PAGES, summed } from './rows.js';
import type { Stored } from './table.js';
import { lockTenant } from './tenants.js';
import { all, one, run, type Work } from './work.js';

/**
 * The writes of an artifact's life, each inside the caller's transaction. Locks are taken in the
 * order idempotency key → session → blob → tenant, so two writers on the same rows queue instead
 * of deadlocking (PostgreSQL; SQLite's transaction holds the whole database).
 */

export function* insertArtifact(d: Dialect, input: InsertArtifactInput): Work<InsertArtifactResult> {
  const { artifact: a, idempotency } = input;
  if (a.status !== 'active' && a.status !== 'pending') {
    throw new Error(`insertArtifact takes an active or pending row, not '${a.status}'.`);
  }
  assertStorableMetadata(a.metadata);

  if (idempotency) {
    // Claims the key first: a concurrent duplicate waits for our commit, then finds the fresh
    // record (only one older than `notBefore` is replaced) and replays, or claims it if we roll back.
    const { key, response, notBefore } = idempotency;
    const claimed = yield* run(
      `INSERT INTO idempotency (tenant_id, key, created_at, status, body, artifact_id) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, key) DO UPDATE SET created_at = excluded.created_at, status = excluded.status,
         body = excluded.body, artifact_id = excluded.artifact_id
       WHERE idempotency.created_at <= ?`,
      [a.tenantId, key, a.createdAt, response.status, response.body, a.id, notBefore],
    );
    if (claimed === 0) {
      const prior = yield* one<{ status: number; body: string }>(
        'SELECT status, body FROM idempotency WHERE tenant_id = ? AND key = ?',
        [a.tenantId, key],
      );
      if (prior) return { kind: 'replay', response: { status: prior.status, body: prior.body } };
      throw new Error('Idempotency record vanished during insert.');
    }
  }

  yield* checkNotSealed(d, a);
  // Every check that can refuse comes before the artifact row; a throw rolls back the rest.
  if (a.status === 'active') yield* addLiveReference(d, a, input.storageLimitBytes);
  yield* run(ARTIFACTS.insert, ARTIFACTS.values(a));
  if (a.status === 'active') {
    yield* indexAndCount(d, a);
    // A pending row is invisible: its event comes when it becomes active.
    yield* appendEvents([artifactEvent('artifact.created', a, a.createdAt)]);
  }
  return { kind: 'created', artifact: a };
}

/** Locks an existing session row, so a concurrent seal waits for this write (or this write for the seal). */
function* checkNotSealed(d: Dialect, a: ArtifactRow): Work<void> {
  if (a.sessionId === null) return;
  const session = yield* one<{ sealed_at: number | null }>(
    `SELECT sealed_at FROM sessions WHERE tenant_id = ? AND session_id = ?${d.forUpdate}`,
    [a.tenantId, a.sessionId],
  );
  if (session && session.sealed_at !== null) {
    throw new CairnError('session_sealed', `Session ${a.sessionId} is sealed; it accepts no more uploads.`);
  }
}

/** What becoming active means beyond the blob reference: the metadata index and the session row. */
function* indexAndCount(d: Dialect, a: ArtifactRow): Work<void> {
  yield* indexMetadata(d, a);
  if (a.sessionId === null) return;
  yield* run(
    `INSERT INTO sessions (tenant_id, session_id, artifact_count, sealed_at, first_artifact_at, last_artifact_at)
     VALUES (?, ?, 1, NULL, ?, ?)
     ON CONFLICT (tenant_id, session_id) DO UPDATE SET
       artifact_count = sessions.artifact_count + 1,
       first_artifact_at = ${d.least}(sessions.first_artifact_at, excluded.first_artifact_at),
       last_artifact_at = ${d.greatest}(sessions.last_artifact_at, excluded.last_artifact_at)`,
    [a.tenantId, a.sessionId, a.createdAt, a.createdAt],
  );
}

/**
 * pending → active for a completed upload, the row already locked by the caller. It enters lists
 * at completion time, so `createdAt` moves to `now` and `expiresAt` keeps its TTL from there.
 */
export function* activateArtifact(d: Dialect, row: ArtifactRow, limit: number, now: number): Work<ArtifactRow> {
  if (row.status !== 'pending') return row;
  const a: ArtifactRow = {
    ...row,
    status: 'active',
    createdAt: now,
    expiresAt: row.expiresAt === null ? null : row.expiresAt + (now - row.createdAt),
  };
  yield* checkNotSealed(d, a);
  yield* addLiveReference(d, a, limit);
  yield* run(
    "UPDATE artifacts SET status = 'active', created_at = ?, expires_at = ? WHERE id = ? AND status = 'pending'",
    [a.createdAt, a.expiresAt, a.id],
  );
  yield* indexAndCount(d, a);
  yield* appendEvents([artifactEvent('artifact.created', a, now)]);
  return a;
}

/**
 * Counts one more active reference to the blob. The upsert locks the blob row, so concurrent
 * inserts of the same bytes agree on which one is first; the first adds the size to the tenant,
 * under the tenant row's lock, refusing when the limit would be passed. A referenced blob is
 * stored: its write (pinBlob) is over.
 */
function* addLiveReference(d: Dialect, a: ArtifactRow, limit: number): Work<void> {
  // The port asks callers to pin first; a missing row is still recorded rather than lost.
  const blob = yield* one<{ size_bytes: number; live_refs: number }>(
    `INSERT INTO blobs (tenant_id, content_hash, size_bytes, live_refs, orphaned_at, deleting_since, created_at)
     VALUES (?, ?, ?, 1, NULL, NULL, ?)
     ON CONFLICT (tenant_id, content_hash) DO UPDATE SET live_refs = blobs.live_refs + 1, orphaned_at = NULL,
       writer = NULL, writing_until = NULL
     RETURNING size_bytes, live_refs`,
    [a.tenantId, a.contentHash, a.sizeBytes, a.createdAt],
  );
  if (blob?.live_refs !== 1) return;
  if (!(yield* lockTenant(d.forNoKeyUpdate, a.tenantId))) throw new Error(`Unknown tenant ${a.tenantId}.`);
  const tenant = (yield* one<{ storage_bytes: number }>('SELECT storage_bytes FROM tenants WHERE id = ?', [
    a.tenantId,
  ]))!;
  if (tenant.storage_bytes + blob.size_bytes > limit) {
    throw new CairnError('quota_exceeded', `Storage limit of ${limit} bytes would be exceeded.`);
  }
  yield* run('UPDATE tenants SET storage_bytes = storage_bytes + ? WHERE id = ?', [blob.size_bytes, a.tenantId]);
}

/** One row per indexed top-level value, in one statement of a fixed text. */
function* indexMetadata(d: Dialect, a: ArtifactRow): Work<void> {
  const pairs: [string, string][] = [];
  for (const [key, value] of Object.entries(a.metadata)) {
    const indexed = metadataIndexValue(d, value);
    if (indexed !== null) pairs.push([key, indexed]);
  }
  if (pairs.length === 0) return;
  yield* run(
    `INSERT INTO artifact_meta (artifact_id, key, tenant_id, value, created_at)
     SELECT ?, j.value ->> 0, ?, j.value ->> 1, CAST(? AS BIGINT) FROM ${d.jsonRows}`,
    [a.id, a.tenantId, a.createdAt, JSON.stringify(pairs)],
  );
}

/**
 * Moves active artifacts (already locked by the caller) to `deleted` or `expired` with every side
 * effect: session counts, blob references (and the tenant's bytes for blobs losing their last
 * one), metadata index rows, links and pages. Rows that are not active are skipped: the
 * conditional UPDATE decides which call retires a row. Returns the rows that moved, as they are now.
 */
export function* retireArtifacts(
  d: Dialect,
  ids: string[],
  to: 'deleted' | 'expired',
  now: number,
): Work<ArtifactRow[]> {
  if (ids.length === 0) return [];
  const movedRows = yield* all<Stored>(
    `UPDATE artifacts SET status = ?, deleted_at = ? WHERE ${d.inList('id')} AND status = 'active'
     RETURNING ${ARTIFACTS.list}`,
    [to, to === 'deleted' ? now : null, d.list(ids)],
  );
  if (movedRows.length === 0) return [];
  const retired = movedRows.map((r) => ARTIFACTS.read(r));
  const moved = retired.map((a) => ({
    id: a.id,
    tenant_id: a.tenantId,
    content_hash: a.contentHash,
    session_id: a.sessionId,
  }));

  // Set-wise, each a statement of a fixed text over the batch's rows as one JSON parameter, so a
  // sweeper batch holds its locks for a handful of round trips.
  const sessions = summed(moved.filter((r) => r.session_id !== null).map((r) => [r.tenant_id, r.session_id!, 1]));
  if (sessions.length > 0) {
    yield* run(
      `UPDATE sessions SET artifact_count = ${d.greatest}(0, sessions.artifact_count - CAST(j.value ->> 2 AS BIGINT))
       FROM ${d.jsonRows} WHERE sessions.tenant_id = j.value ->> 0 AND sessions.session_id = j.value ->> 1`,
      [JSON.stringify(sessions)],
    );
  }
  // The references go, then the bytes of blobs whose last one went are freed from their tenant.
  const blobs = yield* all<{ tenant_id: string; size_bytes: number; live_refs: number }>(
    `UPDATE blobs SET live_refs = ${d.greatest}(0, blobs.live_refs - CAST(j.value ->> 2 AS BIGINT))
     FROM ${d.jsonRows} WHERE blobs.tenant_id = j.value ->> 0 AND blobs.content_hash = j.value ->> 1
       AND blobs.live_refs > 0
     RETURNING tenant_id, size_bytes, live_refs`,
    [JSON.stringify(summed(moved.map((r) => [r.tenant_id, r.content_hash, 1])))],
  );
  const freed = summed(blobs.filter((b) => b.live_refs === 0).map((b) => [b.tenant_id, b.size_bytes]));
  if (freed.length > 0) {
    yield* run(
      `UPDATE tenants SET storage_bytes = ${d.greatest}(0, tenants.storage_bytes - CAST(j.value ->> 1 AS BIGINT))
       FROM ${d.jsonRows} WHERE tenants.id = j.value ->> 0`,
      [JSON.stringify(freed)],
    );
  }
  const movedIds = d.list(moved.map((r) => r.id));
  yield* run(`DELETE FROM artifact_meta WHERE ${d.inList('artifact_id')}`, [movedIds]);
  yield* run(`DELETE FROM links WHERE ${d.inList('artifact_id')}`, [movedIds]);
  const unpublish = `UPDATE pages SET live = FALSE, updated_at = ? WHERE ${d.inList('artifact_id')} AND live = TRUE
    RETURNING ${PAGES.list}`;
  const offline = (yield* all<Stored>(unpublish, [now, movedIds])).map((r) => PAGES.read(r));
  const events: NewEvent[] = retired.map((a) =>
    artifactEvent(to === 'deleted' ? 'artifact.deleted' : 'artifact.expired', a, now),
  );
  const sessionOf = new Map(retired.map((a) => [a.id, a.sessionId]));
  for (const p of offline) events.push(pageEvent('page.unpublished', p, sessionOf.get(p.artifactId) ?? null, now));
  yield* appendEvents(events);
  return retired;
}

/**
 * Removes artifact rows for good, with what still points at them. Blob rows are left to the orphan
 * sweep. With `now`, each purge is recorded as an event (not for pending rows: never visible).
 */
export function* purgeArtifacts(d: Dialect, ids: string[], now?: number): Work<void> {
  if (ids.length === 0) return;
  const list = [d.list(ids)];
  if (now !== undefined) {
    const gone = yield* all<Stored>(`SELECT ${ARTIFACTS.list} FROM artifacts WHERE ${d.inList('id')}`, list);
    yield* appendEvents(gone.map((r) => artifactEvent('artifact.purged', ARTIFACTS.read(r), now)));
  }
  yield* run(`DELETE FROM artifact_meta WHERE ${d.inList('artifact_id')}`, list);
  yield* run(`DELETE FROM links WHERE ${d.inList('artifact_id')}`, list);
  yield* run(`DELETE FROM pages WHERE ${d.inList('artifact_id')}`, list);
  yield* run(`DELETE FROM artifacts WHERE ${d.inList('id')}`, list);
}
