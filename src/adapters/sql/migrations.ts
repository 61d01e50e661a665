import type { MigrationResult } from '../../ports/metadata-store.js';
import type { SchemaTypes } from './dialect.js';
import { LATEST_VERSION, MIGRATIONS, SQLITE_LEGACY_VERSIONS, schemaMigrationsTable } from './schema.js';
import { exec, one, run, type Work } from './work.js';

/** What an engine adds to the one migration procedure (sqlite/migrate.ts, postgres/migrate.ts). */
export interface MigrationSteps {
  /**
   * First in the transaction: what makes instances starting together queue, so each later one
   * finds the first one's work recorded (PostgreSQL: an advisory lock; SQLite's BEGIN IMMEDIATE
   * already does it), and anything the schema needs before its tables.
   */
  prepare?(): Work<void>;
  /**
   * SQLite only: the version a file from before `schema_migrations` records in its own numbering
   * (`PRAGMA user_version`), or 0. Read before the table is created.
   */
  legacyVersion?(): Work<number>;
  /** SQLite only: told the version reached, when anything changed. */
  migrated?(version: number): Work<void>;
}

/**
 * The procedure both engines run, inside one write transaction (`sql.write`), so a failure leaves
 * the database as it was. Forward-only: a database is at version N when migrations 1…N are
 * recorded in `schema_migrations`; those after N are applied in order, each with its row. A
 * database recording a version this code does not know is refused, changing nothing: a newer
 * Cairn migrated it, and an older one cannot know what that changed. A SQLite file from before
 * `schema_migrations` first gets the versions its schema holds recorded (SQLITE_LEGACY_VERSIONS).
 */
export function* migrate(types: SchemaTypes, engine: MigrationSteps): Work<MigrationResult> {
  if (engine.prepare) yield* engine.prepare();
  const legacy = engine.legacyVersion ? yield* engine.legacyVersion() : 0;
  yield* exec(schemaMigrationsTable(types));
  if (legacy > 0) {
    const bridged = SQLITE_LEGACY_VERSIONS[legacy];
    if (bridged === undefined) {
      throw new Error(`Database schema version ${legacy} (user_version) is not one this Cairn knows; upgrade Cairn.`);
    }
    for (let v = 1; v <= bridged; v++) yield* record(v);
  }
  const found = yield* one<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  const from = Number(found?.v ?? 0);
  if (from > LATEST_VERSION) {
    throw new Error(`Database schema version ${from} is newer than this Cairn (${LATEST_VERSION}); upgrade Cairn.`);
  }
  for (let v = from + 1; v <= LATEST_VERSION; v++) {
    yield* exec(MIGRATIONS[v - 1]!(types));
    yield* record(v);
  }
  if (engine.migrated && (legacy > 0 || from < LATEST_VERSION)) yield* engine.migrated(LATEST_VERSION);
  return { from, to: LATEST_VERSION };
}

function record(version: number): Work<number> {
  return run('INSERT INTO schema_migrations (version) VALUES (?)', [version]);
}
