import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import * as nodeModule from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/adapters/postgres/index.js';
import { LATEST_VERSION } from '../../src/adapters/sql/schema.js';
import { SqliteMetadataStore } from '../../src/adapters/sqlite/index.js';
import type { MigrationResult } from '../../src/ports/metadata-store.js';
import { postgresUnavailable } from '../helpers/postgres.js';
import { MIGRATIONS as LEGACY_POSTGRES } from './fixtures/legacy-postgres/schema.js';
import { MIGRATIONS as LEGACY_SQLITE } from './fixtures/legacy-sqlite/schema.js';

/**
 * The shared migrations (src/adapters/sql) on both engines: versions recorded in
 * `schema_migrations`, applied once, refused when the database is newer, and databases made by
 * the Cairn from before the shared schema (its DDL frozen in fixtures/) upgraded to exactly the
 * schema a fresh database gets, checked in each engine's catalog.
 */

const url = process.env.CAIRN_TEST_DATABASE_URL;
const versions = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/**
 * SQLite starters in separate processes run the TypeScript sources directly: Node strips the
 * types (22.18+, 23.6+) and fixtures/ts-resolve-hooks.mjs maps `.js` imports to `.ts`
 * (module.registerHooks, 22.15+).
 */
const childrenRunTypeScript = Boolean(
  (process.features as { typescript?: unknown }).typescript && 'registerHooks' in nodeModule,
);
if (!childrenRunTypeScript && !process.env.CI) {
  console.warn(`\n!!! SKIPPING SQLite starters in several processes: Node ${process.version} cannot run .ts files.\n`);
}

/** One database of one engine, reached directly (no Cairn code) except through migrate(). */
interface Db {
  /** SQLite: the file. */
  path?: string;
  /** Through the engine's real entry point (SqliteMetadataStore / migratePostgres). */
  migrate(): Promise<MigrationResult>;
  exec(sql: string): Promise<void>;
  rows<R = Record<string, unknown>>(sql: string): Promise<R[]>;
  /** Tables, columns, types, defaults, constraints and indexes, from the catalog. */
  schema(): Promise<unknown>;
  tables(): Promise<string[]>;
  close(): Promise<void>;
}

interface Engine {
  name: string;
  /** A new, empty database. */
  fresh(): Promise<Db>;
  /** A database built as the Cairn before the shared schema built it, at `version` of ITS numbering. */
  legacy(version: number): Promise<Db>;
  /** The versions the old Cairn had, and the `from` the shared code reports for each. */
  legacyFrom: Record<number, number>;
  /** DDL of a `schema_migrations` table as this engine has it. */
  recordTable: string;
  /** `n` starters migrating one new database at the same moment. */
  together(n: number): Promise<{ results: MigrationResult[]; db: Db }>;
  cleanup(): Promise<void>;
}

// --- SQLite ------------------------------------------------------------------------------------

/** Comments and layout out, so that DDL differing only in spacing compares equal. */
const normalize = (sql: string | null) =>
  sql
    ?.replace(/--[^\n]*/g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),])\s*/g, '$1')
    .trim() ?? null;

function sqliteEngine(): Engine {
  let dir: string | undefined;
  let n = 0;
  const opened: Database.Database[] = [];
  const file = () => join(dir!, `db${++n}.sqlite`);

  const wrap = (path: string): Db => {
    const raw = new Database(path);
    opened.push(raw);
    const rows = async <R>(sql: string) => raw.prepare(sql).all() as R[];
    return {
      path,
      async migrate() {
        const store = new SqliteMetadataStore({ path });
        try {
          return await store.migrate();
        } finally {
          await store.close();
        }
      },
      exec: async (sql) => void raw.exec(sql),
      rows,
      async tables() {
        return (await rows<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")).map(
          (r) => r.name,
        );
      },
      async schema() {
        const objects = raw
          .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
          .all() as { type: string; name: string; tbl_name: string; sql: string | null }[];
        return objects.map((o) => ({
          ...o,
          sql: normalize(o.sql),
          ...(o.type === 'table'
            ? {
                columns: raw.pragma(`table_xinfo(${o.name})`),
                indexes: raw.pragma(`index_list(${o.name})`),
                foreignKeys: raw.pragma(`foreign_key_list(${o.name})`),
              }
            : { columns: raw.pragma(`index_xinfo(${o.name})`) }),
        }));
      },
      async close() {
        raw.close();
      },
    };
  };

  return {
    name: 'SQLite',
    recordTable:
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)',
    legacyFrom: { 1: 1, 2: 2, 3: 3, 4: 4, 5: 4 },
    async fresh() {
      dir ??= await mkdtemp(join(tmpdir(), 'cairn-migrations-'));
      return wrap(file());
    },
    async legacy(version) {
      dir ??= await mkdtemp(join(tmpdir(), 'cairn-migrations-'));
      const path = file();
      // As the old Connection.migrate() did: each migration, then user_version, in one transaction.
      const raw = new Database(path);
      raw.pragma('journal_mode = WAL');
      raw.transaction(() => {
        for (let v = 1; v <= version; v++) {
          raw.exec(LEGACY_SQLITE[v - 1]!);
          raw.pragma(`user_version = ${v}`);
        }
      })();
      raw.close();
      return wrap(path);
    },
    async together(count) {
      dir ??= await mkdtemp(join(tmpdir(), 'cairn-migrations-'));
      const path = file();
      const startAt = Date.now() + 2000;
      const child = (): Promise<MigrationResult> =>
        new Promise((resolve, reject) => {
          const p = spawn(
            process.execPath,
            [
              '--import',
              join(import.meta.dirname, 'fixtures/ts-resolve-hooks.mjs'),
              join(import.meta.dirname, 'fixtures/migrate-child.ts'),
              path,
              String(startAt),
            ],
            { stdio: ['ignore', 'pipe', 'pipe'] },
          );
          let out = '';
          let err = '';
          p.stdout.on('data', (d) => (out += d));
          p.stderr.on('data', (d) => (err += d));
          p.on('error', reject);
          p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}: ${err}`))));
        });
      const results = await Promise.all(Array.from({ length: count }, child));
      return { results, db: wrap(path) };
    },
    async cleanup() {
      for (const raw of opened) if (raw.open) raw.close();
      if (dir) await rm(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}

// --- PostgreSQL --------------------------------------------------------------------------------

/** The old migrate.ts's record, as it created it. */
const LEGACY_POSTGRES_RECORD = `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`;

function postgresEngine(): Engine {
  const schemas: string[] = [];
  const clients: pg.Client[] = [];

  const wrap = async (schema: string): Promise<Db> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    // Unqualified names are this database's; the catalog queries below name it anyway.
    await client.query(`SET search_path = ${schema}`);
    const rows = async <R>(sql: string) => (await client.query(sql)).rows as R[];
    const unqualified = (s: string | null) => s?.replaceAll(`${schema}.`, '') ?? null;
    return {
      migrate: () => migratePostgres({ connectionString: url!, schema }),
      exec: async (sql) => void (await client.query(sql)),
      rows,
      async tables() {
        const { rows } = await client.query(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
          [schema],
        );
        return rows.map((r) => r.table_name);
      },
      async schema() {
        const columns = await client.query(
          `SELECT table_name, column_name, ordinal_position, data_type, collation_name, column_default, is_nullable
             FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
          [schema],
        );
        const indexes = await client.query(
          'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
          [schema],
        );
        const constraints = await client.query(
          `SELECT cl.relname, co.conname, co.contype, pg_get_constraintdef(co.oid) AS def
             FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid
            WHERE co.connamespace = $1::regnamespace ORDER BY cl.relname, co.conname`,
          [schema],
        );
        return {
          columns: columns.rows,
          indexes: indexes.rows.map((r) => ({ ...r, indexdef: unqualified(r.indexdef) })),
          constraints: constraints.rows.map((r) => ({ ...r, def: unqualified(r.def) })),
        };
      },
      async close() {},
    };
  };
  const newSchema = () => {
    const s = `cairn_test_${randomBytes(6).toString('hex')}`;
    schemas.push(s);
    return s;
  };

  return {
    name: 'PostgreSQL',
    recordTable: LEGACY_POSTGRES_RECORD,
    legacyFrom: { 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6 },
    async fresh() {
      // Created beforehand, as for a role given its own schema (together() leaves it to migrate).
      const schema = newSchema();
      const db = await wrap(schema);
      await db.exec(`CREATE SCHEMA ${schema}`);
      return db;
    },
    async legacy(version) {
      const schema = newSchema();
      const db = await wrap(schema);
      // As the old runMigrations() did, less the lock: the migrations and their records.
      await db.exec(`CREATE SCHEMA ${schema}`);
      await db.exec('BEGIN');
      await db.exec(LEGACY_POSTGRES_RECORD);
      for (let v = 1; v <= version; v++) {
        await db.exec(LEGACY_POSTGRES[v - 1]!);
        await db.exec(`INSERT INTO schema_migrations (version) VALUES (${v})`);
      }
      await db.exec('COMMIT');
      return db;
    },
    async together(count) {
      const schema = newSchema();
      const results = await Promise.all(
        Array.from({ length: count }, () => migratePostgres({ connectionString: url!, schema })),
      );
      return { results, db: await wrap(schema) };
    },
    async cleanup() {
      await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
      if (schemas.length === 0) return;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        for (const s of schemas.splice(0)) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

// --- the suite, once per engine ----------------------------------------------------------------

/** Rows every version of the schema since 1 can hold (the old SQLite spelled booleans 0/1). */
const BASE_ROWS = (bool: (b: boolean) => string) => `
  INSERT INTO settings (name, value) VALUES ('secret', 'kept');
  INSERT INTO tenants (id, name, plan, suspended, created_at, storage_bytes)
    VALUES ('ten_a', 'a', 'pro', ${bool(true)}, 1700000000000, 42);
  INSERT INTO api_keys (id, tenant_id, hash, last4, created_at) VALUES ('key_a', 'ten_a', 'h', 'abcd', 1);
  INSERT INTO artifacts (id, tenant_id, filename, content_type, size_bytes, content_hash, metadata, session_id,
      created_at, status)
    VALUES ('art_a', 'ten_a', 'f.txt', 'text/plain', 3, 'c', '{"type":"transcript"}', 's1', 2, 'active');
  INSERT INTO artifact_meta (artifact_id, key, tenant_id, value, created_at) VALUES ('art_a', 'type', 'ten_a', 'transcript', 2);
  INSERT INTO sessions (tenant_id, session_id, artifact_count, first_artifact_at, last_artifact_at)
    VALUES ('ten_a', 's1', 1, 2, 2);
  INSERT INTO pages (slug, tenant_id, artifact_id, visibility, access, live, created_at, updated_at)
    VALUES ('p1', 'ten_a', 'art_a', 'public', 'open', ${bool(true)}, 3, 3);
`;
const ACCOUNT_ROWS = `
  INSERT INTO users (id, email, password_hash, tenant_id, created_at) VALUES ('usr_a', 'a@example.com', 'x', 'ten_a', 4);
`;
const RESUMABLE_ROWS = `
  INSERT INTO resumable_uploads (id, tenant_id, length_bytes, offset_bytes, segments, created_at, expires_at)
    VALUES ('up_a', 'ten_a', 10, 5, '[]', 5, 6);
`;

async function dump(db: Db): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of await db.tables()) {
    if (t !== 'schema_migrations') out[t] = await db.rows(`SELECT * FROM ${t} ORDER BY 1`);
  }
  return out;
}

const recorded = async (db: Db) =>
  (await db.rows<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).map((r) =>
    Number(r.version),
  );

const pgReason = await postgresUnavailable(url);
if (pgReason && !process.env.CI) {
  console.warn(`\n!!! SKIPPING the PostgreSQL half of the migration tests: ${pgReason}.\n!!! CI runs it.\n`);
}
if (pgReason && process.env.CI) {
  describe('migrations on PostgreSQL', () => {
    beforeAll(() => {
      throw new Error(`CI must run the PostgreSQL migration tests, but ${pgReason}.`);
    });
    it('needs PostgreSQL', () => {});
  });
}

const engines: {
  name: string;
  make: () => Engine;
  skip: boolean;
  bool: (b: boolean) => string;
  legacyLatest: number;
}[] = [
  { name: 'SQLite', make: sqliteEngine, skip: false, bool: (b) => (b ? '1' : '0'), legacyLatest: LEGACY_SQLITE.length },
  {
    name: 'PostgreSQL',
    make: postgresEngine,
    skip: pgReason !== null,
    bool: String,
    legacyLatest: LEGACY_POSTGRES.length,
  },
];

describe.each(engines)('migrations on $name', ({ name, make, skip, bool, legacyLatest }) => {
  let engine: Engine;
  beforeAll(() => {
    engine = make();
  });
  afterEach(async () => {
    await engine.cleanup();
  });
  afterAll(async () => {
    await engine.cleanup();
  });

  it.skipIf(skip)(
    'a fresh database gets every migration, each recorded once; a second run applies nothing',
    async () => {
      const db = await engine.fresh();
      expect(await db.migrate()).toEqual({ from: 0, to: LATEST_VERSION });
      expect(await recorded(db)).toEqual(versions(LATEST_VERSION));
      const schema = await db.schema();
      const applied = await db.rows('SELECT version, applied_at FROM schema_migrations ORDER BY version');

      expect(await db.migrate()).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
      expect(await db.schema()).toEqual(schema);
      expect(await db.rows('SELECT version, applied_at FROM schema_migrations ORDER BY version')).toEqual(applied);
    },
  );

  it.skipIf(skip)('refuses a database newer than the code, changing nothing', async () => {
    const db = await engine.fresh();
    await db.migrate();
    // A later Cairn's migration: recorded, and its table there.
    await db.exec('CREATE TABLE from_the_future (x integer)');
    await db.exec(`INSERT INTO schema_migrations (version) VALUES (${LATEST_VERSION + 1})`);
    const schema = await db.schema();
    const rows = await dump(db);
    const applied = await recorded(db);

    await expect(db.migrate()).rejects.toThrow(
      `Database schema version ${LATEST_VERSION + 1} is newer than this Cairn (${LATEST_VERSION}); upgrade Cairn.`,
    );
    expect(await db.schema()).toEqual(schema);
    expect(await dump(db)).toEqual(rows);
    expect(await recorded(db)).toEqual(applied);
  });

  it.skipIf(skip)('refuses an empty database recording only a newer version, creating none of the tables', async () => {
    const fresh = await engine.fresh();
    // Only the record: were the refusal to come after the migrations, they would all be there.
    await fresh.exec(engine.recordTable);
    await fresh.exec(`INSERT INTO schema_migrations (version) VALUES (${LATEST_VERSION + 1})`);
    await expect(fresh.migrate()).rejects.toThrow(/is newer than this Cairn/);
    expect(await fresh.tables()).toEqual(['schema_migrations']);
  });

  it.skipIf(skip)(
    'a database from before the shared schema, at each of its versions, upgrades to what a fresh one gets',
    async () => {
      const fresh = await engine.fresh();
      await fresh.migrate();
      const want = await fresh.schema();
      for (let v = 1; v <= legacyLatest; v++) {
        const db = await engine.legacy(v);
        await db.exec(BASE_ROWS(bool));
        if (v >= 4) await db.exec(ACCOUNT_ROWS);
        if (v === legacyLatest) await db.exec(RESUMABLE_ROWS);
        const rows = await dump(db);

        expect(await db.migrate(), `from its version ${v}`).toEqual({ from: engine.legacyFrom[v], to: LATEST_VERSION });
        expect(await recorded(db)).toEqual(versions(LATEST_VERSION));
        expect(await db.schema(), `from its version ${v}`).toEqual(want);
        // Every row kept, with the values it had (columns added since then come on top).
        const after = await dump(db);
        for (const [table, before] of Object.entries(rows)) {
          expect(after[table], `${table}, from its version ${v}`).toMatchObject(before);
        }
        expect(await db.migrate()).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION });
      }
    },
    // Six PostgreSQL schemas built and migrated: seconds on a busy machine.
    60_000,
  );

  it.skipIf(skip || (name === 'SQLite' && !childrenRunTypeScript && !process.env.CI))(
    'several starters at once on one new database apply each migration once',
    async () => {
      const { results, db } = await engine.together(4);
      // One of them did the work; the others queued behind it and found it done.
      expect(results.filter((r) => r.from === 0)).toHaveLength(1);
      expect(results.filter((r) => r.from === LATEST_VERSION)).toHaveLength(3);
      expect(results.every((r) => r.to === LATEST_VERSION)).toBe(true);
      expect(await recorded(db)).toEqual(versions(LATEST_VERSION));
    },
  );
});

describe('SQLite specifics', () => {
  const engine = sqliteEngine();
  afterEach(async () => {
    await engine.cleanup();
  });

  it('keeps user_version at the version reached, so a Cairn from before refuses the file as newer', async () => {
    const db = await engine.legacy(LEGACY_SQLITE.length);
    await db.migrate();
    const [row] = await db.rows<{ user_version: number }>('PRAGMA user_version');
    expect(row!.user_version).toBe(LATEST_VERSION);
    expect(LATEST_VERSION).toBeGreaterThan(LEGACY_SQLITE.length);
  });

  it('refuses a file whose user_version no Cairn before the shared schema wrote, changing nothing', async () => {
    const db = await engine.fresh();
    await db.exec('CREATE TABLE t (x INTEGER); PRAGMA user_version = 9');
    await expect(db.migrate()).rejects.toThrow(
      'Database schema version 9 (user_version) is not one this Cairn knows; upgrade Cairn.',
    );
    expect(await db.tables()).toEqual(['t']);
    expect(await db.rows('PRAGMA user_version')).toEqual([{ user_version: 9 }]);
  });

  it('a legacy file keeps answering through the store after the upgrade', async () => {
    const db = await engine.legacy(LEGACY_SQLITE.length);
    await db.exec(BASE_ROWS((b) => (b ? '1' : '0')));
    await db.migrate();
    const store = new SqliteMetadataStore({ path: db.path! });
    try {
      expect(await store.getOrSetSetting('secret', 'new')).toBe('kept');
      expect(await store.getTenant('ten_a')).toMatchObject({
        id: 'ten_a',
        plan: 'pro',
        suspended: true,
        storageBytes: 42,
      });
    } finally {
      await store.close();
    }
  });
});
