import type { MigrationResult } from '../../ports/metadata-store.js';
import type { SchemaTypes } from './dialect.js';
import { LATEST_VERSION, MIGRATIONS, SQLITE_LEGACY_VERSIONS, schemaMigrationsTable } from './schema.js';
import { drive, driveSync } from './work.js';

type Awaitable<T> = T | Promise<T>;

/**
 * What the migration procedure needs of an engine: each adapter implements it in its own folder.
 * PostgreSQL answers with promises; SQLite answers synchronously (SyncMigrationTarget), and must:
 * its write lock is taken by a blocking call, so two connections of one process migrating at
 * once would, with an await between the statements, leave the second blocking the event loop
 * while the first could never finish.
 */
export interface MigrationTarget {
  readonly types: SchemaTypes;
  /**
   * Opens the transaction everything else runs in, holding what makes concurrent starters queue
   * (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory lock), so the second one finds the first's
   * work recorded.
   */
  begin(): Awaitable<void>;
  commit(): Awaitable<void>;
  /** Also after a failed begin(); must not throw when no transaction is open. */
  rollback(): Awaitable<void>;
  /** Runs a script of one or more statements, without parameters. */
  exec(script: string): Awaitable<void>;
  /** The rows of one query. */
  rows<R>(sql: string): Awaitable<R[]>;
  /**
   * SQLite only: the version a file from before `schema_migrations` records in its own numbering
   * (`PRAGMA user_version`), or 0 when there is none or the table exists. Read before the table
   * is created.
   */
  legacyVersion?(): Awaitable<number>;
  /** SQLite only: told the resulting version before the commit, when anything changed (see sqlite/migrate.ts). */
  migrated?(version: number): Awaitable<void>;
}

export interface SyncMigrationTarget extends MigrationTarget {
  begin(): void;
  commit(): void;
  rollback(): void;
  exec(script: string): void;
  rows<R>(sql: string): R[];
  legacyVersion?(): number;
  migrated?(version: number): void;
}

/** Applies pending migrations on a synchronous engine (SQLite). */
export function migrateSync(target: SyncMigrationTarget): MigrationResult {
  return driveSync(procedure(target), (answer) => {
    if (answer instanceof Promise) throw new Error('A synchronous migration target returned a promise.');
    return answer;
  });
}

/** Applies pending migrations on an engine that answers with promises (PostgreSQL). */
export function migrateAsync(target: MigrationTarget): Promise<MigrationResult> {
  return drive(procedure(target), (answer) => answer);
}

/**
 * The one procedure both engines run. It is a generator so that one text serves a synchronous
 * and an asynchronous engine: every call to the target is `yield* wait(…)`, which `driveSync` or
 * `drive` (work.ts) answer at once (SQLite) or once the promise settles (PostgreSQL).
 *
 * Forward-only: a database is at version N when migrations 1…N are recorded; those after N are
 * applied in order, each followed by its row in `schema_migrations`, all in the one transaction
 * begin() opened, so a failure leaves the database as it was. A database recording a version
 * this code does not know is refused, changing nothing: a newer Cairn migrated it, and an older
 * one cannot know what that changed. A SQLite file from before `schema_migrations` first gets
 * the versions its schema holds recorded (SQLITE_LEGACY_VERSIONS), then goes on like any other.
 */
function* procedure(t: MigrationTarget): Steps<MigrationResult> {
  try {
    yield* wait(t.begin());
    const legacy = t.legacyVersion ? yield* wait(t.legacyVersion()) : 0;
    yield* wait(t.exec(schemaMigrationsTable(t.types)));
    if (legacy > 0) {
      const bridged = SQLITE_LEGACY_VERSIONS[legacy];
      if (bridged === undefined) {
        throw new Error(`Database schema version ${legacy} (user_version) is not one this Cairn knows; upgrade Cairn.`);
      }
      for (let v = 1; v <= bridged; v++) yield* wait(record(t, v));
    }
    const rows = yield* wait(t.rows<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations'));
    const from = Number(rows[0]?.v ?? 0);
    if (from > LATEST_VERSION) {
      throw new Error(`Database schema version ${from} is newer than this Cairn (${LATEST_VERSION}); upgrade Cairn.`);
    }
    for (let v = from + 1; v <= LATEST_VERSION; v++) {
      yield* wait(t.exec(MIGRATIONS[v - 1]!(t.types)));
      yield* wait(record(t, v));
    }
    if (t.migrated && (legacy > 0 || from < LATEST_VERSION)) yield* wait(t.migrated(LATEST_VERSION));
    yield* wait(t.commit());
    return { from, to: LATEST_VERSION };
  } catch (err) {
    try {
      yield* wait(t.rollback());
    } catch {
      // The first error is the one worth reporting; the transaction dies with the connection.
    }
    throw err;
  }
}

/** `version` is a loop counter over MIGRATIONS, never input, so it is written into the SQL. */
function record(t: MigrationTarget, version: number): Awaitable<void> {
  return t.exec(`INSERT INTO schema_migrations (version) VALUES (${version})`);
}

type Steps<T> = Generator<Awaitable<unknown>, T, unknown>;

/** One call to the target: hands its answer (or promise) to the driver and returns what it resolved to. */
function* wait<T>(value: Awaitable<T>): Steps<T> {
  return (yield value) as T;
}
