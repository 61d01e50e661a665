/**
 * One statement at a time, the same SQL text on every engine: `?` placeholders, which the
 * PostgreSQL runner numbers (`$1`, `$2`, …). Each call is one statement and so atomic on its own;
 * code written against this interface settles races with conditional statements (`UPDATE … WHERE
 * owner = ?`) rather than transactions, which is what lets it run unchanged on both engines.
 */
export interface SqlRunner {
  /** The first row a query returns, or null. */
  one<R>(sql: string, params: unknown[]): Promise<R | null>;
  all<R>(sql: string, params: unknown[]): Promise<R[]>;
  /** A statement that changes rows; resolves with how many it changed. */
  change(sql: string, params: unknown[]): Promise<number>;
  /** A statement that changes rows and returns them (`… RETURNING`): the first, or null. */
  changeReturning<R>(sql: string, params: unknown[]): Promise<R | null>;
}

/** `?` → `$1`, `$2`, … (the shared SQL never has a `?` inside a string literal). */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
