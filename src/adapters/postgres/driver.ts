import { createHash } from 'node:crypto';
import type pg from 'pg';
import { writeEvents } from '../sql/events.js';
import { numberedPlaceholders, SqlDriver } from '../sql/runner.js';
import { drive, type Step, type Work } from '../sql/work.js';
import type { Database, Querier } from './database.js';
import { POSTGRES } from './dialect.js';

const statements = new Map<string, { name: string; text: string }>();

/**
 * Every statement is prepared, parsed and planned once per connection (planning a GET's join cost
 * twice as much as running it). The shared SQL's texts are a bounded set (no value is spliced in;
 * lists and row sets are one parameter), and name their columns rather than `*`, so a migration
 * adding a column does not break what an instance prepared.
 */
function statement(sql: string): { name: string; text: string } {
  let s = statements.get(sql);
  if (s === undefined) {
    s = {
      name: `cairn_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`,
      text: numberedPlaceholders(sql),
    };
    statements.set(sql, s);
  }
  return s;
}

async function execute(q: Querier, step: Step): Promise<unknown> {
  // Each transaction writes its own events where it records them (events.ts).
  if (step.op === 'append') return drive(writeEvents(POSTGRES, step.events), (s) => execute(q, s));
  // A script goes as a simple query, the protocol that takes several statements.
  if (step.op === 'exec') return void (await q.query(step.sql));
  const { name, text } = statement(step.sql);
  const config: pg.QueryConfig = { name, text, values: step.params as unknown[] };
  if (step.op === 'row' || step.op === 'rows') {
    const result = await q.query({ ...config, rowMode: 'array' } as pg.QueryConfig);
    return step.op === 'rows' ? result.rows : ((result.rows[0] as unknown[] | undefined) ?? null);
  }
  const result: pg.QueryResult = await q.query(config);
  if (step.op === 'run') return result.rowCount ?? 0;
  return step.op === 'one' ? (result.rows[0] ?? null) : result.rows;
}

/** The SQL layer on the pool: single statements autocommit, `write` is a READ COMMITTED transaction. */
export class PostgresDriver extends SqlDriver {
  readonly dialect = POSTGRES;

  constructor(private readonly db: Database) {
    super();
  }

  protected exec(step: Step): Promise<unknown> {
    return execute(this.db, step);
  }

  change<R>(sql: string, params: readonly unknown[]): Promise<R | null> {
    return this.one<R>(sql, params);
  }

  write<T>(work: () => Work<T>): Promise<T> {
    return this.db.tx((q) => drive(work(), (s) => execute(q, s)));
  }

  writeTogether<T>(work: () => Work<T>): Promise<T> {
    return this.write(work);
  }
}
