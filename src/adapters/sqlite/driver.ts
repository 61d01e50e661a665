import type { SqlDriver } from '../sql/runner.js';
import { driveSync, type Step, type Work } from '../sql/work.js';
import type { Connection } from './database.js';
import { SQLITE } from './dialect.js';

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; a boolean is stored as 0/1. */
function bindable(params: readonly unknown[]): unknown[] {
  return params.map((p) => (typeof p === 'boolean' ? Number(p) : p));
}

/**
 * The SQL layer on the embedded connection. Everything runs synchronously: a `write` is one
 * generator run to its end inside BEGIN IMMEDIATE, so no other work of this process interleaves.
 */
export class SqliteDriver implements SqlDriver {
  readonly dialect = SQLITE;

  constructor(private readonly c: Connection) {}

  private readonly exec = (step: Step): unknown => {
    const params = bindable(step.params);
    switch (step.op) {
      case 'one':
        return this.c.get(step.sql, ...params) ?? null;
      case 'all':
        return this.c.all(step.sql, ...params);
      case 'row':
        return this.c.getValues(step.sql, ...params) ?? null;
      case 'rows':
        return this.c.allValues(step.sql, ...params);
      case 'run':
        return this.c.run(step.sql, ...params);
    }
  };

  async one<R>(sql: string, params: readonly unknown[]): Promise<R | null> {
    return this.c.get<R>(sql, ...bindable(params)) ?? null;
  }

  async all<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    return this.c.all<R>(sql, ...bindable(params));
  }

  async row(sql: string, params: readonly unknown[]): Promise<unknown[] | null> {
    return this.c.getValues(sql, ...bindable(params)) ?? null;
  }

  async rows(sql: string, params: readonly unknown[]): Promise<unknown[][]> {
    return this.c.allValues(sql, ...bindable(params));
  }

  change<R>(sql: string, params: readonly unknown[]): Promise<R | null> {
    return this.c.writeTogether(() => this.c.get<R>(sql, ...bindable(params)) ?? null);
  }

  async run(sql: string, params: readonly unknown[]): Promise<number> {
    return this.c.run(sql, ...bindable(params));
  }

  async write<T>(work: () => Work<T>): Promise<T> {
    return this.c.write(() => driveSync(work(), this.exec));
  }

  writeTogether<T>(work: () => Work<T>): Promise<T> {
    return this.c.writeTogether(() => driveSync(work(), this.exec));
  }
}
