import type { MigrationSteps } from '../sql/migrations.js';
import { exec, one } from '../sql/work.js';
import { checkSchemaName } from './database.js';

/**
 * PostgreSQL's part of the migration procedure (sql/migrations.ts), run as the first statements
 * of its transaction. A transaction-scoped advisory lock keyed by the schema name makes instances
 * starting together queue, and each one after the first finds nothing left to do. DDL is
 * transactional in PostgreSQL, so a failed migration leaves the previous version intact.
 */
export function postgresMigration(schema: string | undefined): MigrationSteps {
  const target = schema === undefined ? null : checkSchemaName(schema);
  return {
    *prepare() {
      // Waiting for another instance's migration, or building an index on a large table, may
      // take longer than a statement bound set for the role or database.
      yield* exec('SET LOCAL statement_timeout = 0');
      const key = "hashtext('cairn.migrate:' || coalesce(?, current_schema(), ''))";
      yield* one(`SELECT pg_advisory_xact_lock(${key}) AS locked`, [target]);
      if (target === null) return;
      // Looked up first: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the
      // schema exists, which a least-privilege role given its own schema does not have.
      if (!(yield* one('SELECT 1 AS found FROM pg_namespace WHERE nspname = ?', [target]))) {
        yield* exec(`CREATE SCHEMA ${target}`);
      }
      yield* exec(`SET LOCAL search_path = ${target}`);
    },
  };
}
