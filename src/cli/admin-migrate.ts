import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { SqliteMetadataStore } from '../adapters/sqlite/index.js';
import type { Config } from '../config.js';
import type { MigrationResult } from '../ports/metadata-store.js';

/** What `cairn admin migrate` did, as printed with --json. */
export interface MigrateReport {
  database: 'postgresql' | 'sqlite';
  /** The SQLite file, or the PostgreSQL schema (null: the role's default search_path). */
  location: string | null;
  from_version: number;
  to_version: number;
  /** Versions applied by this run, in order; [] when the schema was already current. */
  applied: number[];
}

/**
 * Migrates the metadata store and nothing else: no blob store (which would list and delete S3
 * staging objects), no Redis, and no data folder unless the records live in it (SQLite).
 */
export async function migrateMetadata(config: Config): Promise<MigrateReport> {
  let result: MigrationResult;
  let location: string | null;
  if (config.databaseUrl) {
    location = config.databaseSchema ?? null;
    const { migratePostgres } = await import('../adapters/postgres/index.js');
    result = await migratePostgres({
      connectionString: config.databaseUrl,
      ...(config.databaseSchema ? { schema: config.databaseSchema } : {}),
    });
  } else {
    location = path.join(config.dataDir, 'cairn.sqlite');
    await mkdir(config.dataDir, { recursive: true });
    const store = new SqliteMetadataStore({ path: location });
    try {
      result = await store.migrate();
    } finally {
      await store.close();
    }
  }
  const applied = Array.from({ length: result.to - result.from }, (_, i) => result.from + i + 1);
  return {
    database: config.databaseUrl ? 'postgresql' : 'sqlite',
    location,
    from_version: result.from,
    to_version: result.to,
    applied,
  };
}

export function describeMigration(r: MigrateReport): string {
  const where =
    r.database === 'sqlite'
      ? `SQLite (${r.location})`
      : `PostgreSQL${r.location === null ? '' : ` (schema ${r.location})`}`;
  if (r.applied.length === 0) {
    return `${where}: schema is up to date at version ${r.to_version}; no migrations were needed.`;
  }
  const list = r.applied.join(', ');
  return `${where}: applied migration${r.applied.length === 1 ? '' : 's'} ${list}; schema is now at version ${r.to_version}.`;
}
