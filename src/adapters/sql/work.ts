/**
 * A unit of work written once for every engine: a generator that yields the statements it needs
 * and gets each one's result back. The engine's driver decides how to run it. SQLite (synchronous)
 * runs the whole generator inside one `BEGIN IMMEDIATE`, with nothing else able to interleave;
 * PostgreSQL (asynchronous) awaits each statement on a client holding a transaction. So each
 * transaction body exists once, and keeps on SQLite the atomicity a synchronous body has.
 *
 * Statements use `?` placeholders (the PostgreSQL driver numbers them) and never contain a `?`
 * inside a string literal.
 *
 *   function* seal(id: string): Work<boolean> {
 *     const row = yield* one<{ sealed_at: number | null }>('SELECT sealed_at FROM … WHERE id = ?', [id]);
 *     return (yield* run('UPDATE … WHERE id = ?', [id])) > 0;
 *   }
 */
export type Work<T> = Generator<Step, T, unknown>;

export interface Step {
  /**
   * one: the first row or null; all: every row; row: the first row as an array of values, or null;
   * run: rows changed; exec: a script of statements without parameters (DDL), nothing.
   */
  op: 'one' | 'all' | 'row' | 'rows' | 'run' | 'exec';
  sql: string;
  params: readonly unknown[];
}

export function* one<R>(sql: string, params: readonly unknown[] = []): Work<R | null> {
  return (yield { op: 'one', sql, params }) as R | null;
}

export function* all<R>(sql: string, params: readonly unknown[] = []): Work<R[]> {
  return (yield { op: 'all', sql, params }) as R[];
}

/** The first row as its column values in select-list order (see Joined). */
export function* row(sql: string, params: readonly unknown[] = []): Work<unknown[] | null> {
  return (yield { op: 'row', sql, params }) as unknown[] | null;
}

/** Every row as its column values. */
export function* rows(sql: string, params: readonly unknown[] = []): Work<unknown[][]> {
  return (yield { op: 'rows', sql, params }) as unknown[][];
}

/** A statement that changes rows; how many it changed. */
export function* run(sql: string, params: readonly unknown[] = []): Work<number> {
  return (yield { op: 'run', sql, params }) as number;
}

/** A script of one or more statements without parameters (migrations). */
export function* exec(sql: string): Work<void> {
  yield { op: 'exec', sql, params: [] };
}

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
