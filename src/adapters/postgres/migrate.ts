import pg from 'pg';
import type { MigrationResult } from '../../ports/metadata-store.js';
import { type MigrationTarget, migrateAsync } from '../sql/migrations.js';
import { checkSchemaName, clientConfig, type Querier } from './database.js';
import { POSTGRES } from './dialect.js';

export type { MigrationResult };

/**
 * Applies pending migrations (sql/migrations.ts) on one connection, in one transaction, under a
 * transaction-scoped advisory lock keyed by the schema name: instances starting together queue on
 * the lock, and each one after the first finds nothing left to do. DDL is transactional in
 * PostgreSQL, so a failed migration leaves the previous version intact.
 */
export async function runMigrations(client: Querier, schema?: string): Promise<MigrationResult> {
  return migrateAsync(postgresMigrationTarget(client, schema === undefined ? null : checkSchemaName(schema)));
}

function postgresMigrationTarget(client: Querier, target: string | null): MigrationTarget {
  return {
    types: POSTGRES.types,
    async begin() {
      await client.query('BEGIN');
      await client.query(
        `SELECT pg_advisory_xact_lock(hashtext('cairn.migrate:' || coalesce($1, current_schema(), '')))`,
        [target],
      );
      if (target !== null) {
        // Checked first: CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the
        // schema exists, which a least-privilege role given its own schema does not have.
        const found = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [target]);
        if (found.rowCount === 0) await client.query(`CREATE SCHEMA ${target}`);
        // Also when the connection was not opened with it (the standalone admin path).
        await client.query(`SET LOCAL search_path = ${target}`);
      }
    },
    async commit() {
      await client.query('COMMIT');
    },
    async rollback() {
      // Outside a transaction (BEGIN itself failed) PostgreSQL only warns.
      await client.query('ROLLBACK');
    },
    async exec(script) {
      // Without parameters: the simple query protocol, which takes several statements.
      await client.query(script);
    },
    async rows<R>(sql: string) {
      return (await client.query(sql)).rows as R[];
    },
  };
}

/** `cairn admin migrate` for PostgreSQL: one short-lived connection, then gone. */
export async function migratePostgres(options: {
  connectionString: string;
  schema?: string;
}): Promise<MigrationResult> {
  const client = new pg.Client(clientConfig(options));
  await client.connect();
  try {
    return await runMigrations(client, options.schema);
  } finally {
    await client.end();
  }
}
