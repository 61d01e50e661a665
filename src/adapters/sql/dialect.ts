/**
 * The column types of the DDL (schema.ts), the few spellings of the schema that differ between
 * the engines. Each engine's map yields exactly the types its adapter had before the schema was
 * shared, so existing databases keep working.
 */
export interface SchemaTypes {
  /**
   * Identifiers and labels. PostgreSQL gives them `COLLATE "C"` (byte order, SQLite's own), so
   * `created_at DESC, id DESC` ties break identically on both engines, whatever the locale.
   */
  readonly id: string;
  /** Free text never ordered or compared by range. */
  readonly text: string;
  readonly int: string;
  /** Milliseconds, bytes and large counts: the port speaks integer ms, so nothing is converted. */
  readonly bigint: string;
  readonly bool: string;
  /** `bool`'s false, as a column default. */
  readonly false: string;
  readonly json: string;
  /** After a table read by its primary key: SQLite then keeps rows in the key's B-tree. */
  readonly withoutRowid: string;
  /** `schema_migrations.applied_at`: a point in time, and the current one. */
  readonly timestamp: string;
  readonly now: string;
}

/** What the engines spell differently, and nothing else. */
export interface Dialect {
  readonly types: SchemaTypes;
  /**
   * Row locks taken by a transaction's reads, on PostgreSQL, where instances write concurrently.
   * Empty on SQLite: a write transaction holds the whole database (BEGIN IMMEDIATE).
   */
  readonly forUpdate: string;
  readonly forNoKeyUpdate: string;
  readonly skipLocked: string;
  /** `INDEXED BY name` on SQLite, whose planner picks badly for lists (see list-queries.ts). */
  indexedBy(index: string): string;
  /** The two-argument max/min of values in a row. */
  readonly greatest: string;
  readonly least: string;
  /** `column` is one of the values of a parameter made by `list` (one text for any count). */
  inList(column: string): string;
  list(values: readonly unknown[]): unknown;
  /**
   * A FROM item `j` with one row per element of a parameter holding `JSON.stringify(rows)`, an
   * array of arrays: `j.value ->> 0` is a row's first field as text. So a statement of a fixed
   * text writes or matches any number of rows.
   */
  readonly jsonRows: string;
  /** After a subquery PostgreSQL must not flatten into its parent (`OFFSET 0`). */
  readonly fence: string;
  /** A placeholder whose value the planner cannot look at (see list-queries.ts). */
  blind(value: string | number): string;
  /** Whether a metadata value longer than 256 bytes is indexed by its digest (PostgreSQL's B-tree entries are bounded). */
  readonly digestsLongMetadata: boolean;
  /**
   * Whether the point reads of one turn go out as one statement (PostgreSQL: one round trip for
   * all) or one by one (SQLite: no round trip to save, and one bad row fails only its own read).
   */
  readonly batchesReads: boolean;
}
