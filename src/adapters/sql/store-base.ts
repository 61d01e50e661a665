import type { SqlDriver } from './runner.js';
import type { Work } from './work.js';

/** How an engine tells every process that credentials changed (see TenantStore.credentialsEpoch). */
export interface CredentialsSignal {
  current(): number | null;
  /** A change made through this process: moves the epoch at once. */
  changed(): void;
  /** Run inside the transaction that changes credentials (PostgreSQL: a NOTIFY sent on commit). */
  announce(): Work<void>;
}

/**
 * The root of the SQL metadata store. The store is one class per port, each extending the one
 * before it (tenants → artifacts → sharing → sweeper), so that one object, on one connection or
 * pool, implements every port without a facade that only delegates; the engine classes
 * (sqlite/, postgres/) extend the last with their lifecycle.
 */
export abstract class SqlStoreBase {
  constructor(
    protected readonly sql: SqlDriver,
    protected readonly credentials: CredentialsSignal,
  ) {}

  protected get d() {
    return this.sql.dialect;
  }
}
