import type { Dialect } from './dialect.js';
import type { Step, Work } from './work.js';

export type { Dialect };

/**
 * How the SQL layer reaches an engine. The single-statement calls run outside any transaction:
 * reads (on SQLite in this turn's snapshot, see Connection) and lone writes without RETURNING.
 * Anything that writes and reads back, or writes more than once, is a `write`.
 */
export abstract class SqlDriver {
  abstract readonly dialect: Dialect;
  /** One statement outside any transaction. */
  protected abstract exec(step: Step): Promise<unknown>;
  /**
   * One statement that changes rows and returns them (`… RETURNING`): the first, or null. Alone
   * it needs no transaction on PostgreSQL; on SQLite it shares the turn's commit (writeTogether).
   */
  abstract change<R>(sql: string, params: readonly unknown[]): Promise<R | null>;
  /**
   * One write transaction. `work` is a function because the PostgreSQL driver may start it again
   * (a deadlock rolls the whole unit back); so it must not change anything outside the database.
   */
  abstract write<T>(work: () => Work<T>): Promise<T>;
  /**
   * A write that may share its commit with the others asked for in this turn of the event loop
   * (SQLite's group commit, see Connection.writeTogether); each still succeeds or fails alone.
   */
  abstract writeTogether<T>(work: () => Work<T>): Promise<T>;

  one<R>(sql: string, params: readonly unknown[] = []): Promise<R | null> {
    return this.exec({ op: 'one', sql, params }) as Promise<R | null>;
  }
  all<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
    return this.exec({ op: 'all', sql, params }) as Promise<R[]>;
  }
  /** The first row as its column values in select-list order, or null (see Joined). */
  row(sql: string, params: readonly unknown[]): Promise<unknown[] | null> {
    return this.exec({ op: 'row', sql, params }) as Promise<unknown[] | null>;
  }
  /** Every row as its column values. */
  rows(sql: string, params: readonly unknown[]): Promise<unknown[][]> {
    return this.exec({ op: 'rows', sql, params }) as Promise<unknown[][]>;
  }
  /** One statement that changes rows; how many it changed. */
  run(sql: string, params: readonly unknown[]): Promise<number> {
    return this.exec({ op: 'run', sql, params }) as Promise<number>;
  }
}

/** `?` → `$1`, `$2`, … (the shared SQL never has a `?` inside a string literal). */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
