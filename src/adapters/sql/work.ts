import type { NewEvent } from './events.js';

/**
 * A unit of work written once for every engine: a generator that yields its statements and gets
 * each result back. SQLite's driver runs the whole generator synchronously inside one
 * `BEGIN IMMEDIATE`, so nothing interleaves; PostgreSQL's awaits each statement on a client
 * holding a transaction. Statements use `?` placeholders, never inside a string literal.
 *
 *   function* seal(id: string): Work<boolean> {
 *     const row = yield* one<{ sealed_at: number | null }>('SELECT sealed_at FROM … WHERE id = ?', [id]);
 *     return (yield* run('UPDATE … WHERE id = ?', [id])) > 0;
 *   }
 */
export type Work<T> = Generator<Step, T, unknown>;

/** What a unit of work asks its driver for: a statement, or events to record (see events.ts). */
export type Step = StatementStep | AppendStep;

/** One statement and what to answer with (see the functions below). */
export interface StatementStep {
  op: 'one' | 'all' | 'row' | 'rows' | 'run' | 'exec';
  sql: string;
  params: readonly unknown[];
}

/**
 * Change-feed events recorded in this transaction. A driver may write them at once or, when the
 * transaction is shared by several writes, together at its end (SQLite's group commit).
 */
export interface AppendStep {
  op: 'append';
  events: readonly NewEvent[];
}

const step = (op: StatementStep['op']) =>
  function* (sql: string, params: readonly unknown[] = []): Work<unknown> {
    return yield { op, sql, params };
  };
type Statement<T> = (sql: string, params?: readonly unknown[]) => Work<T>;

/** The first row, or null. */
export const one = step('one') as <R>(sql: string, params?: readonly unknown[]) => Work<R | null>;
export const all = step('all') as <R>(sql: string, params?: readonly unknown[]) => Work<R[]>;
/** The first row as its column values in select-list order (see Joined). */
export const row = step('row') as Statement<unknown[] | null>;
/** Every row as its column values. */
export const rows = step('rows') as Statement<unknown[][]>;
/** A statement that changes rows; how many it changed. */
export const run = step('run') as Statement<number>;
/** A script of one or more statements without parameters (migrations). */
export const exec = step('exec') as (sql: string) => Work<void>;

/**
 * Runs a generator to its end with a synchronous executor: each yielded step's result is sent
 * back in, and an executor's throw is thrown into the generator (so its own try/finally runs).
 */
export function driveSync<S, T>(work: Generator<S, T, unknown>, exec: (step: S) => unknown): T {
  let next = work.next();
  while (!next.done) {
    let result: unknown;
    try {
      result = exec(next.value);
    } catch (err) {
      next = work.throw(err);
      continue;
    }
    next = work.next(result);
  }
  return next.value;
}

/** The same with an asynchronous executor. */
export async function drive<S, T>(work: Generator<S, T, unknown>, exec: (step: S) => unknown): Promise<T> {
  let next = work.next();
  while (!next.done) {
    let result: unknown;
    try {
      result = await exec(next.value);
    } catch (err) {
      next = work.throw(err);
      continue;
    }
    next = work.next(result);
  }
  return next.value;
}
