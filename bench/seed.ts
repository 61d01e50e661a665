import Database from 'better-sqlite3';
import pg from 'pg';
import { encodeCursor } from '../src/core/cursor.js';

/**
 * Bulk seeding of one tenant's list, straight into the store's tables (never through HTTP), with
 * the same rows in both engines. Row i: created 1 ms after row i-1, session `s<i % 1000>`,
 * metadata `{"batch":"b<i % 100>","kind":"k<i % 7>"}` (indexed in artifact_meta as the store does), all active and
 * sharing one blob. The timed list queries then walk the real list indexes.
 */
export const SESSIONS = 1000;
export const BATCHES = 100;
export const KINDS = 7;
const SIZE = 1234;
const HASH = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export interface Seeded {
  rows: number;
  /** A cursor 90 % of the way down the list. */
  deepCursor: string;
  metadataFilter: string;
  /**
   * Two pairs, the broader one first so that it drives the walk: 1/7 of the rows are `k3`, and
   * 1 in 100 of those are `b42` (1/700 of the rows match both).
   */
  twoMetadataFilters: string;
  sessionId: string;
}

const idOf = (i: number) => `art_b${String(i).padStart(15, '0')}`;

function describe(rows: number, start: number): Seeded {
  const deep = rows - 1 - Math.floor(rows * 0.9);
  return {
    rows,
    deepCursor: encodeCursor([start + deep, idOf(deep)]),
    metadataFilter: 'metadata.batch=b42',
    twoMetadataFilters: 'metadata.kind=k3&metadata.batch=b42',
    sessionId: 's42',
  };
}

/**
 * SQLite: prepared inserts into the data folder's database (server stopped), committed every
 * SEED_BATCH rows with a checkpoint after each: in one transaction the WAL holds every page the
 * inserts touched until the end (2.5 GB for a million rows, 7 minutes), and ten million would not fit.
 */
const SEED_BATCH = 100_000;

export function seedSqlite(dbPath: string, tenantId: string, rows: number, now: number): Seeded {
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  // Ten index B-trees grow at once; with the default 2 MB page cache they thrash the disk.
  db.pragma('cache_size = -1048576');
  const start = now - rows - 60_000;
  const artifact = db.prepare(
    `INSERT INTO artifacts (id, tenant_id, filename, content_type, size_bytes, content_hash, metadata,
       session_id, agent_id, created_at, expires_at, deleted_at, status)
     VALUES (?, ?, ?, 'text/plain', ?, ?, ?, ?, ?, ?, NULL, NULL, 'active')`,
  );
  const meta = db.prepare(
    'INSERT INTO artifact_meta (artifact_id, key, tenant_id, value, created_at) VALUES (?, ?, ?, ?, ?)',
  );
  const session = db.prepare(
    `INSERT INTO sessions (tenant_id, session_id, artifact_count, sealed_at, first_artifact_at, last_artifact_at)
     VALUES (?, ?, ?, NULL, ?, ?)`,
  );
  const insertRows = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const batch = `b${i % BATCHES}`;
      const kind = `k${i % KINDS}`;
      artifact.run(
        idOf(i),
        tenantId,
        `file-${i}.txt`,
        SIZE,
        HASH,
        `{"batch":"${batch}","kind":"${kind}"}`,
        `s${i % SESSIONS}`,
        `agent-${i % 10}`,
        start + i,
      );
      meta.run(idOf(i), 'batch', tenantId, batch, start + i);
      meta.run(idOf(i), 'kind', tenantId, kind, start + i);
    }
  });
  for (let from = 0; from < rows; from += SEED_BATCH) {
    insertRows(from, Math.min(rows, from + SEED_BATCH));
    db.pragma('wal_checkpoint(TRUNCATE)');
  }
  db.transaction(() => {
    for (let s = 0; s < Math.min(SESSIONS, rows); s++) {
      const last = s + Math.floor((rows - 1 - s) / SESSIONS) * SESSIONS;
      session.run(tenantId, `s${s}`, Math.floor((last - s) / SESSIONS) + 1, start + s, start + last);
    }
    db.prepare(
      `INSERT INTO blobs (tenant_id, content_hash, size_bytes, live_refs, orphaned_at, deleting_since, created_at)
       VALUES (?, ?, ?, ?, NULL, NULL, ?)`,
    ).run(tenantId, HASH, SIZE, rows, now);
    db.prepare('UPDATE tenants SET storage_bytes = storage_bytes + ? WHERE id = ?').run(SIZE, tenantId);
  })();
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return describe(rows, start);
}

/**
 * PostgreSQL: the same rows, generated server-side by batched INSERT … SELECT over
 * generate_series (the bulk path; nothing crosses the wire per row), then VACUUM ANALYZE: the
 * statistics for the planner, and the vacuum that autovacuum would otherwise start on its own after
 * a million inserts, in the middle of the timed runs.
 */
export async function seedPostgres(
  url: string,
  schema: string,
  tenantId: string,
  rows: number,
  now: number,
): Promise<Seeded> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  const start = now - rows - 60_000;
  try {
    const step = 100_000;
    for (let from = 0; from < rows; from += step) {
      const to = Math.min(rows, from + step) - 1;
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO artifacts (id, tenant_id, filename, content_type, size_bytes, content_hash, metadata,
           session_id, agent_id, created_at, expires_at, deleted_at, status)
         SELECT 'art_b' || lpad(i::text, 15, '0'), $1, 'file-' || i || '.txt', 'text/plain', ${SIZE}, '${HASH}',
           jsonb_build_object('batch', 'b' || (i % ${BATCHES}), 'kind', 'k' || (i % ${KINDS})), 's' || (i % ${SESSIONS}), 'agent-' || (i % 10),
           $2::bigint + i, NULL, NULL, 'active'
         FROM generate_series($3::bigint, $4::bigint) AS i`,
        [tenantId, start, from, to],
      );
      await client.query(
        `INSERT INTO artifact_meta (artifact_id, key, tenant_id, value, created_at)
         SELECT 'art_b' || lpad(i::text, 15, '0'), k.key, $1,
           CASE k.key WHEN 'batch' THEN 'b' || (i % ${BATCHES}) ELSE 'k' || (i % ${KINDS}) END, $2::bigint + i
         FROM generate_series($3::bigint, $4::bigint) AS i CROSS JOIN (VALUES ('batch'), ('kind')) AS k(key)`,
        [tenantId, start, from, to],
      );
      await client.query('COMMIT');
    }
    await client.query(
      `INSERT INTO sessions (tenant_id, session_id, artifact_count, sealed_at, first_artifact_at, last_artifact_at)
       SELECT $1, 's' || (i % ${SESSIONS}), count(*), NULL, min($2::bigint + i), max($2::bigint + i)
       FROM generate_series(0, $3::bigint - 1) AS i GROUP BY i % ${SESSIONS}`,
      [tenantId, start, rows],
    );
    await client.query(
      `INSERT INTO blobs (tenant_id, content_hash, size_bytes, live_refs, orphaned_at, deleting_since, created_at)
       VALUES ($1, '${HASH}', ${SIZE}, $2, NULL, NULL, $3)`,
      [tenantId, rows, now],
    );
    await client.query('UPDATE tenants SET storage_bytes = storage_bytes + $1 WHERE id = $2', [SIZE, tenantId]);
    await client.query('VACUUM ANALYZE artifacts, artifact_meta, sessions, blobs, tenants');
    // The seed leaves about a gigabyte of WAL, so PostgreSQL starts a checkpoint that it spreads
    // over minutes: its writes and fsyncs landed on the timed GET and list runs. Done now, it is
    // part of seeding. Needs a superuser or pg_checkpoint; without, the runs go on as before.
    await client.query('CHECKPOINT').catch((err: Error) => {
      console.error(`[bench] CHECKPOINT after seeding refused (${err.message}); timed runs may overlap one`);
    });
  } finally {
    await client.end();
  }
  return describe(rows, start);
}

export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * Puts a tenant's request count of this month 10⁹ below zero, so that it never meets its plan's
 * monthly quota (100,000 on Pro): the list runs on the seeded tenant take more (a full run's
 * SQLite lists, then the same server again beside PostgreSQL; `--ab`'s some 90,000 a pair).
 * Server stopped, as for seeding.
 */
const CREDIT = -1_000_000_000;
const month = (now: number) => new Date(now).toISOString().slice(0, 7);

export function creditRequestsSqlite(dbPath: string, tenantId: string, now: number): void {
  const db = new Database(dbPath);
  try {
    db.prepare('INSERT INTO usage_monthly (tenant_id, month, count) VALUES (?, ?, ?)').run(
      tenantId,
      month(now),
      CREDIT,
    );
  } finally {
    db.close();
  }
}

export async function creditRequestsPostgres(
  url: string,
  schema: string,
  tenantId: string,
  now: number,
): Promise<void> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await client.query('INSERT INTO usage_monthly (tenant_id, month, count) VALUES ($1, $2, $3)', [
      tenantId,
      month(now),
      CREDIT,
    ]);
  } finally {
    await client.end();
  }
}
