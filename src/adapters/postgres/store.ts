import type { MetadataStore, MigrationResult } from '../../ports/metadata-store.js';
import type { ResumableUploadStore } from '../../ports/resumable-upload-store.js';
import { SqlAccountStore } from '../sql/account-store.js';
import { SqlMcpSessionStore } from '../sql/mcp-session-store.js';
import { migrate } from '../sql/migrations.js';
import { SqlResumableUploads } from '../sql/resumable-uploads.js';
import { CredentialsWatch } from './credentials-watch.js';
import { Database, type PoolOptions } from './database.js';
import { PostgresDriver } from './driver.js';
import { postgresMigration } from './migrate.js';

export type PostgresMetadataStoreOptions = PoolOptions;

/**
 * The scale-out MetadataStore: PostgreSQL through a `pg` pool shared by any number of Cairn
 * instances. Races between instances are settled by unique constraints and row locks, never by
 * in-process state.
 */
export class PostgresMetadataStore extends SqlMcpSessionStore implements MetadataStore {
  private readonly db: Database;
  private readonly options: PoolOptions;
  private readonly watch: CredentialsWatch;
  /** Users, browser sessions and OAuth state, on the same pool (and so the same migrations). */
  readonly accounts: SqlAccountStore;
  /** Resumable uploads' state, on the same pool. */
  readonly resumables: ResumableUploadStore;

  constructor(options: PostgresMetadataStoreOptions) {
    const db = new Database(options);
    const watch = new CredentialsWatch({ connectionString: options.connectionString, schema: options.schema });
    super(new PostgresDriver(db), watch);
    this.db = db;
    this.watch = watch;
    this.options = options;
    this.accounts = new SqlAccountStore(this.sql);
    this.resumables = new SqlResumableUploads(this.sql);
  }

  /**
   * On a connection of its own, without the requests' bounds: waiting for another instance's
   * migration, or building an index on a large table, may take longer, and pg's client-side
   * timeout (the statement bound + 2 s) cannot be lifted for one transaction.
   */
  async migrate(): Promise<MigrationResult> {
    const unbounded = { ...this.options, statementTimeoutMs: undefined, maxWaiting: undefined, maxConnections: 1 };
    const db = new Database(unbounded);
    try {
      return await new PostgresDriver(db).write(() => migrate(this.d.types, postgresMigration(this.options.schema)));
    } finally {
      await db.close();
    }
  }

  /** Connections of the pool: open, idle, and calls waiting for one (for the metrics). */
  poolStats(): { total: number; idle: number; waiting: number; shed: number } {
    const { totalCount, idleCount, waitingCount } = this.db.pool;
    return { total: totalCount, idle: idleCount, waiting: waitingCount, shed: this.db.shed };
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.watch.close();
    await this.db.close();
  }
}

/** `cairn admin migrate` for PostgreSQL: one short-lived connection, then gone. */
export async function migratePostgres(options: {
  connectionString: string;
  schema?: string;
}): Promise<MigrationResult> {
  const store = new PostgresMetadataStore(options);
  try {
    return await store.migrate();
  } finally {
    await store.close();
  }
}
