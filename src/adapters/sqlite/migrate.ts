import type Database from 'better-sqlite3';
import type { SyncMigrationTarget } from '../sql/migrations.js';
import { SQLITE } from './dialect.js';

/**
 * SQLite's part of the shared migration procedure (sql/migrations.ts). BEGIN IMMEDIATE takes the
 * write lock before the versions are read, so processes starting together on one file queue on
 * it (busy_timeout) and each later one finds the work recorded.
 *
 * `user_version` was the version record before `schema_migrations`; it is still set to the
 * version reached, which is above any Cairn from before (their last was 5), so such a Cairn
 * opening this file refuses it as newer instead of trying to run its own migrations on it.
 */
export function sqliteMigrationTarget(db: Database.Database): SyncMigrationTarget {
  return {
    types: SQLITE.types,
    begin: () => db.exec('BEGIN IMMEDIATE'),
    commit: () => db.exec('COMMIT'),
    rollback: () => {
      if (db.inTransaction) db.exec('ROLLBACK');
    },
    exec: (script) => db.exec(script),
    rows: <R>(sql: string) => db.prepare(sql).all() as R[],
    legacyVersion: () => {
      const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
      return table ? 0 : (db.pragma('user_version', { simple: true }) as number);
    },
    migrated: (version) => {
      db.pragma(`user_version = ${version}`);
    },
  };
}
