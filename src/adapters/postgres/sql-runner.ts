import { numberedPlaceholders, type SqlRunner } from '../sql/runner.js';
import { all, one, type Querier } from './database.js';

/** The shared SQL layer's runner on the PostgreSQL pool (autocommit: one statement per call). */
export class PostgresRunner implements SqlRunner {
  constructor(private readonly q: () => Querier) {}

  one<R>(sql: string, params: unknown[]): Promise<R | null> {
    return one(this.q(), numberedPlaceholders(sql), params) as Promise<R | null>;
  }

  all<R>(sql: string, params: unknown[]): Promise<R[]> {
    return all(this.q(), numberedPlaceholders(sql), params) as Promise<R[]>;
  }

  async change(sql: string, params: unknown[]): Promise<number> {
    return (await this.q().query(numberedPlaceholders(sql), params)).rowCount ?? 0;
  }

  changeReturning<R>(sql: string, params: unknown[]): Promise<R | null> {
    return this.one<R>(sql, params);
  }
}
