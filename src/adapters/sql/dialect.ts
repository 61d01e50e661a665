/**
 * The few spellings of the schema that differ between the engines; the DDL in schema.ts is
 * written once around them. Each engine's map yields exactly the column types its adapter had
 * before the schema was shared, so existing databases and every query keep working.
 */
export interface SchemaTypes {
  /**
   * Identifiers and labels (ids, names, hashes, keys). PostgreSQL gives them `COLLATE "C"`: byte
   * order, SQLite's own, so `created_at DESC, id DESC` ties break identically on both engines,
   * whatever the database's locale; C comparisons are also the cheapest.
   */
  readonly id: string;
  /** Free text that is never ordered or compared by range (values, bodies, titles). */
  readonly text: string;
  /** Small counters and codes. */
  readonly int: string;
  /** Milliseconds, bytes and large counts: the port speaks integer ms, so nothing is converted. */
  readonly bigint: string;
  readonly bool: string;
  /** `bool`'s false, as a column default. */
  readonly false: string;
  /** A JSON document (`jsonb` returns keys in its own order, not the upload's). */
  readonly json: string;
  /**
   * After the closing parenthesis of a table read by its primary key: SQLite then stores rows in
   * the key's B-tree instead of a rowid table plus an index. PostgreSQL has no such choice.
   */
  readonly withoutRowid: string;
  /** `schema_migrations.applied_at`: a point in time, and the current one. */
  readonly timestamp: string;
  readonly now: string;
}

/** What the engines spell differently, and nothing else. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** Column types and the like of the DDL (schema.ts). */
  readonly types: SchemaTypes;
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
  /**
   * A FROM item `j` with one row per element of a parameter holding a JSON array of arrays (pass
   * `JSON.stringify(rows)`): `j.value ->> 0` is the first field of a row as text. Lets a statement
   * with a fixed text write or match any number of rows.
   */
  readonly jsonRows: string;
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
