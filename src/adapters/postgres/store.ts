import type { MetadataStore, MigrationResult } from '../../ports/metadata-store.js';
import type { ResumableUploadStore } from '../../ports/resumable-upload-store.js';
import { SqlAccountStore } from '../sql/account-store.js';
import { SqlResumableUploads } from '../sql/resumable-uploads.js';
import { SqlSweeperStore } from '../sql/sweeper.js';
import { CredentialsWatch } from './credentials-watch.js';
import { Database } from './database.js';
import { PostgresDriver } from './driver.js';
import { runMigrations } from './migrate.js';

export interface PostgresMetadataStoreOptions {
  /** `postgres://user:password@host:5432/database` (any libpq-style URL pg accepts). */
  connectionString: string;
  /**
   * A schema to keep every table in, created by `migrate()` when missing; every pooled
   * connection gets it as its `search_path`. Lets tests (or several Cairn deployments) share one
   * database. Default: the server's default search_path (normally `public`).
   */
  schema?: string;
  /** Pool size per instance (default 10). */
  maxConnections?: number;
  /** Bounds on a slow or unreachable database (see PoolOptions); unset: none. */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  maxWaiting?: number;
}

/**
 * The scale-out MetadataStore: PostgreSQL through a `pg` pool, shared by any number of Cairn
 * instances, through the shared SQL layer. Each port method is one statement or one transaction;
 * races between instances are settled by unique constraints (`ON CONFLICT`) and row locks, never
 * by in-process state.
 */
export class PostgresMetadataStore extends SqlSweeperStore implements MetadataStore {
  private readonly db: Database;
  private readonly schema: string | undefined;
  private readonly watch: CredentialsWatch;
  /** Users, browser sessions and OAuth state, on the same pool (and so the same migrations). */
  readonly accounts: SqlAccountStore;
  /** Resumable uploads' state, on the same pool. */
  readonly resumables: ResumableUploadStore;

  constructor(options: PostgresMetadataStoreOptions) {
    const connection = {
      connectionString: options.connectionString,
      ...(options.schema === undefined ? {} : { schema: options.schema }),
    };
    const db = new Database({
      ...connection,
      ...(options.maxConnections === undefined ? {} : { max: options.maxConnections }),
      ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
      ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
      ...(options.maxWaiting === undefined ? {} : { maxWaiting: options.maxWaiting }),
    });
    const watch = new CredentialsWatch(connection);
    super(new PostgresDriver(db), watch);
    this.db = db;
    this.watch = watch;
    this.schema = options.schema;
    this.accounts = new SqlAccountStore(this.sql);
    this.resumables = new SqlResumableUploads(this.sql);
  }

  async migrate(): Promise<MigrationResult> {
    const { client, release } = await this.db.checkout();
    let broken: Error | undefined;
    try {
      // Building an index on a large table may take longer than a request's statement bound.
      await client.query('SET statement_timeout = 0');
      const result = await runMigrations(client, this.schema);
      await client.query('RESET statement_timeout');
      return result;
    } catch (err) {
      broken = err as Error;
      throw err;
    } finally {
      // A connection left without its bound is dropped rather than handed to a request.
      release(broken);
    }
  }

  /** Connections of the pool: open, idle, and calls waiting for one (for the metrics). */
  poolStats(): { total: number; idle: number; waiting: number; shed: number } {
    const { totalCount, idleCount, waitingCount } = this.db.pool;
    return { total: totalCount, idle: idleCount, waiting: waitingCount, shed: this.db.shedCount };
  }

  async ping(): Promise<void> {
    await this.db.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    await this.watch.close();
    await this.db.close();
  }
}
