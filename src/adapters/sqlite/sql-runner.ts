import type { SqlRunner } from '../sql/runner.js';
import type { Connection } from './database.js';

/** The shared SQL layer's runner on the embedded SQLite connection. */
export class SqliteRunner implements SqlRunner {
  constructor(private readonly c: Connection) {}

  async one<R>(sql: string, params: unknown[]): Promise<R | null> {
    return this.c.get<R>(sql, ...params) ?? null;
  }

  async all<R>(sql: string, params: unknown[]): Promise<R[]> {
    return this.c.all<R>(sql, ...params);
  }

  async change(sql: string, params: unknown[]): Promise<number> {
    return this.c.run(sql, ...params);
  }

  /** In a write transaction of its own: never inside this turn's read snapshot (see Connection). */
  async changeReturning<R>(sql: string, params: unknown[]): Promise<R | null> {
    return this.c.write(() => (this.c.stmt(sql).get(...params) as R | undefined) ?? null);
  }
}
