/**
 * The few spellings of the schema that differ between the engines; the DDL in schema.ts is
 * written once around them. Each engine's map yields exactly the column types its adapter had
 * before the schema was shared, so existing databases and every query keep working.
 */
export interface Dialect {
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

export const SQLITE_DIALECT: Dialect = {
  id: 'TEXT',
  text: 'TEXT',
  int: 'INTEGER',
  bigint: 'INTEGER',
  bool: 'INTEGER',
  false: '0',
  json: 'TEXT',
  withoutRowid: ' WITHOUT ROWID',
  timestamp: 'TEXT',
  now: 'CURRENT_TIMESTAMP',
};

export const POSTGRES_DIALECT: Dialect = {
  id: 'text COLLATE "C"',
  text: 'text',
  int: 'integer',
  bigint: 'bigint',
  bool: 'boolean',
  false: 'false',
  json: 'jsonb',
  withoutRowid: '',
  timestamp: 'timestamptz',
  now: 'now()',
};
