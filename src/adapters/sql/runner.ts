import type { Work } from './work.js';

/**
 * How the SQL layer reaches an engine. Statements are written once, with `?` placeholders (the
 * PostgreSQL driver numbers them) and the few spellings that differ taken from `dialect`.
 *
 * The single-statement calls run outside any transaction: reads (on SQLite inside this turn's
 * read snapshot, see Connection) and lone writes without RETURNING. Anything that writes and
 * reads back, or writes more than once, is a `write`.
 */
export interface SqlDriver {
  readonly dialect: Dialect;
  one<R>(sql: string, params: readonly unknown[]): Promise<R | null>;
  all<R>(sql: string, params: readonly unknown[]): Promise<R[]>;
  /** The first row as its column values in select-list order, or null (see JoinedColumns). */
  row(sql: string, params: readonly unknown[]): Promise<unknown[] | null>;
  /** Every row as its column values. */
  rows(sql: string, params: readonly unknown[]): Promise<unknown[][]>;
  /** One statement that changes rows; how many it changed. */
  run(sql: string, params: readonly unknown[]): Promise<number>;
  /**
   * One statement that changes rows and returns them (`… RETURNING`): the first, or null. Alone
   * it needs no transaction on PostgreSQL; on SQLite it shares the turn's commit (writeTogether).
   */
  change<R>(sql: string, params: readonly unknown[]): Promise<R | null>;
  /** Several reads, no transaction (a `work` that yields no write). */
  read<T>(work: Work<T>): Promise<T>;
  /**
   * One write transaction. `work` is a function because the PostgreSQL driver may start it again
   * (a deadlock rolls the whole unit back); so it must not change anything outside the database.
   */
  write<T>(work: () => Work<T>): Promise<T>;
  /**
   * A write that may share its commit with the others asked for in this turn of the event loop
   * (SQLite's group commit, see Connection.writeTogether); each still succeeds or fails alone.
   */
  writeTogether<T>(work: () => Work<T>): Promise<T>;
}

/** What the engines spell differently, and nothing else. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * Row locks taken by a transaction's reads (`FOR UPDATE`, `FOR NO KEY UPDATE`, `… SKIP LOCKED`)
   * on PostgreSQL, where instances write concurrently. Empty on SQLite: a write transaction holds
   * the whole database (BEGIN IMMEDIATE), so there is nothing to lock or skip.
   */
  readonly forUpdate: string;
  readonly forNoKeyUpdate: string;
  readonly skipLocked: string;
  /** `INDEXED BY name` on SQLite, whose planner picks badly for lists (see list-queries.ts); empty on PostgreSQL. */
  indexedBy(index: string): string;
  /** The two-argument max/min of values in a row: max/min on SQLite, greatest/least on PostgreSQL. */
  readonly greatest: string;
  readonly least: string;
  /** `column` is one of the values of a parameter made by `list` (the SQL text stays the same for any count). */
  inList(column: string): string;
  list(values: readonly unknown[]): unknown;
  /** After a subquery PostgreSQL must not flatten into its parent (`OFFSET 0`); empty on SQLite. */
  readonly fence: string;
  /**
   * A placeholder whose value the planner cannot look at (PostgreSQL: `(SELECT ?::text)`), for a
   * prepared statement that must keep one generic plan (see list-queries.ts); `?` on SQLite.
   */
  blind(value: string | number): string;
  /**
   * Whether a metadata value longer than 256 bytes is indexed by its digest: PostgreSQL's B-tree
   * entries are bounded (~2.7 KB); SQLite indexes it as it is, as it always has.
   */
  readonly digestsLongMetadata: boolean;
  /**
   * Whether the point reads of one turn go out as one statement (PostgreSQL: one round trip for
   * all) or one by one (SQLite: no round trip to save, and one bad row fails only its own read).
   */
  readonly batchesReads: boolean;
}

/** `?` → `$1`, `$2`, … (the shared SQL never has a `?` inside a string literal). */
export function numberedPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
