import pg from 'pg';
import type { MigrationResult } from '../../ports/metadata-store.js';
import { checkSchemaName, clientConfig, type Querier } from './database.js';
import { MIGRATIONS } from './schema.js';

export type { MigrationResult };

/**
 * Applies pending migrations on one connection, in one transaction, under a transaction-scoped
 * advisory lock keyed by the schema name: instances starting together queue on the lock, and
 * each one after the first finds nothing left to do. DDL is transactional in PostgreSQL, so a
 * failed migration leaves the previous version intact.
 */
export async function runMigrations(client: Querier, schema?: string): Promise<MigrationResult> {
  const target = schema === undefined ? null : checkSchemaName(schema);
  await client.query('BEGIN');
  try {
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
    await client.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version integer PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ v: number }>(
      'SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations',
    );
    const from = rows[0]?.v ?? 0;
    if (from > MIGRATIONS.length) {
      throw new Error(
        `Database schema version ${from} is newer than this Cairn (${MIGRATIONS.length}); upgrade Cairn.`,
      );
    }
    for (let v = from; v < MIGRATIONS.length; v++) {
      await client.query(MIGRATIONS[v]!);
      await client.query('INSERT INTO schema_migrations (version) VALUES ($1)', [v + 1]);
    }
    await client.query('COMMIT');
    return { from, to: MIGRATIONS.length };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
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
