import type pg from 'pg';
import { numberedPlaceholders, type SqlDriver } from '../sql/runner.js';
import { drive, type Step, type Work } from '../sql/work.js';
import { type Database, prepared, type Querier } from './database.js';
import { POSTGRES } from './dialect.js';

/** Each SQL text's PostgreSQL form, numbered once (the texts come from a fixed set). */
const numbered = new Map<string, string>();

function pgText(sql: string): string {
  let text = numbered.get(sql);
  if (text === undefined) {
    text = numberedPlaceholders(sql);
    numbered.set(sql, text);
  }
  return text;
}

/**
 * Every statement is prepared (see `prepared`): the shared SQL never splices values into its
 * text and passes lists as one array parameter, so the set of texts stays small and fixed.
 */
async function exec(q: Querier, step: Step): Promise<unknown> {
  const config = prepared(pgText(step.sql), step.params as unknown[]);
  if (step.op === 'row' || step.op === 'rows') {
    const result = await q.query({ ...config, rowMode: 'array' } as pg.QueryConfig);
    return step.op === 'rows' ? result.rows : ((result.rows[0] as unknown[] | undefined) ?? null);
  }
  const result: pg.QueryResult = await q.query(config);
  if (step.op === 'run') return result.rowCount ?? 0;
  return step.op === 'one' ? (result.rows[0] ?? null) : result.rows;
}

/** The SQL layer on the pool: single statements autocommit, `write` is a READ COMMITTED transaction. */
export class PostgresDriver implements SqlDriver {
  readonly dialect = POSTGRES;

  constructor(private readonly db: Database) {}

  one<R>(sql: string, params: readonly unknown[]): Promise<R | null> {
    return exec(this.db.pool, { op: 'one', sql, params }) as Promise<R | null>;
  }

  all<R>(sql: string, params: readonly unknown[]): Promise<R[]> {
    return exec(this.db.pool, { op: 'all', sql, params }) as Promise<R[]>;
  }

  row(sql: string, params: readonly unknown[]): Promise<unknown[] | null> {
    return exec(this.db.pool, { op: 'row', sql, params }) as Promise<unknown[] | null>;
  }

  rows(sql: string, params: readonly unknown[]): Promise<unknown[][]> {
    return exec(this.db.pool, { op: 'rows', sql, params }) as Promise<unknown[][]>;
  }

  change<R>(sql: string, params: readonly unknown[]): Promise<R | null> {
    return this.one<R>(sql, params);
  }

  run(sql: string, params: readonly unknown[]): Promise<number> {
    return exec(this.db.pool, { op: 'run', sql, params }) as Promise<number>;
  }

  read<T>(work: Work<T>): Promise<T> {
    return drive(work, (step) => exec(this.db.pool, step));
  }

  write<T>(work: () => Work<T>): Promise<T> {
    return this.db.tx((q) => drive(work(), (step) => exec(q, step)));
  }

  writeTogether<T>(work: () => Work<T>): Promise<T> {
    return this.write(work);
  }
}
