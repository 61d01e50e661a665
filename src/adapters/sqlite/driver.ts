import { SqlDriver } from '../sql/runner.js';
import { driveSync, type Step, type Work } from '../sql/work.js';
import type { Connection } from './database.js';
import { SQLITE } from './dialect.js';

/**
 * The SQL layer on the embedded connection. Everything runs synchronously: a `write` is one
 * generator run to its end inside BEGIN IMMEDIATE, so no other work of this process interleaves.
 */
export class SqliteDriver extends SqlDriver {
  readonly dialect = SQLITE;
  private readonly c: Connection;

  // No parameter property: a migration test runs this file with Node's type stripping.
  constructor(c: Connection) {
    super();
    this.c = c;
  }

  private readonly step = (step: Step): unknown => {
    // better-sqlite3 binds numbers, strings, bigints, buffers and null; a boolean is stored as 0/1.
    const params = step.params.map((p) => (typeof p === 'boolean' ? Number(p) : p));
    if (step.op === 'exec') return void this.c.db.exec(step.sql);
    if (step.op === 'run') return this.c.run(step.sql, ...params);
    this.c.read();
    const statement = this.c.prepared(step.sql, step.op === 'row' || step.op === 'rows');
    if (step.op === 'one' || step.op === 'row') return statement.get(...params) ?? null;
    return statement.all(...params);
  };

  protected async exec(step: Step): Promise<unknown> {
    return this.step(step);
  }

  change<R>(sql: string, params: readonly unknown[]): Promise<R | null> {
    return this.c.writeTogether(() => this.step({ op: 'one', sql, params }) as R | null);
  }

  async write<T>(work: () => Work<T>): Promise<T> {
    return this.c.write(() => driveSync(work(), this.step));
  }

  writeTogether<T>(work: () => Work<T>): Promise<T> {
    return this.c.writeTogether(() => driveSync(work(), this.step));
  }
}
