import type { MigrationSteps } from '../sql/migrations.js';
import { exec, one } from '../sql/work.js';

/**
 * SQLite's part of the migration procedure (sql/migrations.ts). `user_version` was the version
 * record before `schema_migrations`; it is still set to the version reached, which is above any
 * Cairn from before (their last was 5), so such a Cairn opening this file refuses it as newer
 * instead of running its own migrations on it.
 */
export const SQLITE_MIGRATION: MigrationSteps = {
  *legacyVersion() {
    const table = "SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'";
    if (yield* one(table)) return 0;
    return (yield* one<{ user_version: number }>('PRAGMA user_version'))!.user_version;
  },
  *migrated(version) {
    // A loop bound over the migration list, never input: PRAGMA takes no parameter.
    yield* exec(`PRAGMA user_version = ${version}`);
  },
};
