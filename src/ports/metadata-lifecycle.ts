/**
 * What the composition root needs of the metadata database around the services, and no service
 * uses: the schema, the settings every instance shares (read once at start, e.g. the signing
 * secret), readiness, pool figures for the metrics, and closing.
 */

/** Schema versions before and after `migrate()`; the migrations applied are `from + 1 … to`. */
export interface MigrationResult {
  from: number;
  to: number;
}

export interface MetadataLifecycle {
  /**
   * Creates or upgrades the schema. Safe to call on every start and from several processes (each
   * migration is applied once). Rejects, changing nothing, when the schema is newer than this code.
   */
  migrate(): Promise<MigrationResult>;
  /** Resolves when the database answers a trivial query (readiness). */
  ping?(): Promise<void>;
  /** PostgreSQL's pool: connections open and idle, calls waiting for one, calls shed so far (metrics). */
  poolStats?(): { total: number; idle: number; waiting: number; shed: number };
  close(): Promise<void>;

  // --- settings (e.g. the signing secret shared by all instances) ---
  /** Returns the stored value of `name`, storing `value` first if there is none (first writer wins). */
  getOrSetSetting(name: string, value: string): Promise<string>;
}
