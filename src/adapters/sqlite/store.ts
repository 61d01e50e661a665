import type { MetadataStore, MigrationResult } from '../../ports/metadata-store.js';
import type { ResumableUploadStore } from '../../ports/resumable-upload-store.js';
import { SqlAccountStore } from '../sql/account-store.js';
import { SqlMcpSessionStore } from '../sql/mcp-session-store.js';
import { migrate } from '../sql/migrations.js';
import { SqlResumableUploads } from '../sql/resumable-uploads.js';
import { CredentialsEpoch } from './credentials-epoch.js';
import { Connection } from './database.js';
import { SqliteDriver } from './driver.js';
import { SQLITE_MIGRATION } from './migrate.js';

export interface SqliteMetadataStoreOptions {
  /** A database file path, or ':memory:'. */
  path: string;
}

/**
 * The embedded MetadataStore: one SQLite file in WAL mode. Each unit of work runs to completion
 * before the next starts in this process; BEGIN IMMEDIATE serializes it with other processes on
 * the file (the server and `cairn admin`).
 */
export class SqliteMetadataStore extends SqlMcpSessionStore implements MetadataStore {
  private readonly c: Connection;
  /** Users, browser sessions and OAuth state, on the same connection (and so the same migrations). */
  readonly accounts: SqlAccountStore;
  /** Resumable uploads' state, on the same connection. */
  readonly resumables: ResumableUploadStore;

  constructor(options: SqliteMetadataStoreOptions) {
    const c = new Connection(options.path);
    super(new SqliteDriver(c), new CredentialsEpoch(c));
    this.c = c;
    this.accounts = new SqlAccountStore(this.sql);
    this.resumables = new SqlResumableUploads(this.sql);
  }

  async migrate(): Promise<MigrationResult> {
    return this.sql.write(() => migrate(this.d.types, SQLITE_MIGRATION));
  }

  async ping(): Promise<void> {
    this.c.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.c.close();
  }
}
