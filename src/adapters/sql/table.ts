/** How a stored value becomes a row's field: as it is, a boolean (SQLite's 0/1), or JSON (text, or pg's parsed jsonb). */
export type Kind = 'value' | 'bool' | 'json';

/** A row as the driver returns it: one property per selected column. */
export type Stored = Record<string, unknown>;

type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type Words<S extends string> = S extends `${infer H} ${infer T}` ? H | Words<T> : S;
/** The columns, camelCased, are exactly the row type's fields (checked when a table is declared). */
type Matches<C extends string, Row> = [Camel<C>] extends [keyof Row]
  ? [keyof Row] extends [Camel<C>]
    ? unknown
    : never
  : never;

const camel = (column: string) => column.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function decode(kind: Kind, value: unknown): unknown {
  if (kind === 'value' || value === null) return value;
  if (kind === 'bool') return value === true || value === 1;
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/** Column names enter compiled code (see Table.compile): only plain identifiers may. */
const IDENTIFIER = /^[a-z][a-z0-9_]*$/;

/**
 * A table's columns written once, in schema order, with the Kind of those that are not plain
 * values; the row type's field of each is its camelCase name. From that: the select lists (always
 * naming the columns, never `*`: PostgreSQL's prepared statements must keep their result type
 * when a migration adds a column), the row from a stored record or from a run of values (joins),
 * and the values of an INSERT.
 */
export class Table<Row> {
  readonly columns: readonly string[];
  /** `id, name, …` */
  readonly list: string;
  /** `INSERT INTO name (columns) VALUES (?, …)`, to be given `values(row)`. */
  readonly insert: string;
  private readonly fields: readonly string[];
  private readonly kinds: readonly Kind[];
  private readonly fromStored: (stored: Stored) => Row;
  private readonly fromValues: (values: readonly unknown[], offset: number) => Row;

  constructor(
    readonly name: string,
    columns: string,
    kinds: Partial<Record<string, Kind>>,
  ) {
    this.columns = columns.split(' ');
    this.kinds = this.columns.map((c) => (Object.hasOwn(kinds, c) ? kinds[c]! : 'value'));
    this.fields = this.columns.map(camel);
    this.list = this.columns.join(', ');
    this.insert = `INSERT INTO ${name} (${this.list}) VALUES (${this.columns.map(() => '?').join(', ')})`;
    this.fromStored = this.compile('s', (column) => `s.${column}`);
    this.fromValues = this.compile('v, o', (_, i) => `v[o + ${i}]`);
  }

  /**
   * A function building the row as one object literal from the expressions `source` gives for
   * each column. A loop setting the fields by name took twice as long, 12-25 µs of a 51-row list
   * page.
   */
  private compile<F>(params: string, source: (column: string, i: number) => string): F {
    const fields = this.columns.map((column, i) => {
      if (!IDENTIFIER.test(column)) throw new Error(`Column name '${column}' is not a plain identifier.`);
      const value = source(column, i);
      return `${this.fields[i]}: ${this.kinds[i] === 'value' ? value : `decode('${this.kinds[i]}', ${value})`}`;
    });
    return new Function('decode', `return (${params}) => ({ ${fields.join(', ')} });`)(decode) as F;
  }

  /** `alias.id, alias.name, …` */
  qualified(alias: string): string {
    return this.columns.map((c) => `${alias}.${c}`).join(', ');
  }

  /** The row from a stored record; null stays null. */
  read(stored: Stored): Row;
  read(stored: Stored | null): Row | null;
  read(stored: Stored | null): Row | null {
    return stored === null ? null : this.fromStored(stored);
  }

  /** The row from `values` starting at `offset`; null when its first column is null (a LEFT JOIN's miss). */
  readAt(values: readonly unknown[], offset: number): Row | null {
    return values[offset] === null ? null : this.fromValues(values, offset);
  }

  /** The row's fields in column order, JSON as text (SQLite stores it so; PostgreSQL casts it to jsonb). */
  values(row: Row): unknown[] {
    const fields = row as Stored;
    return this.fields.map((f, i) => (this.kinds[i] === 'json' ? JSON.stringify(fields[f]) : fields[f]));
  }
}

/**
 * Declares a table whose columns must match `Row`'s fields:
 * `table<LinkRow>()('links', 'id tenant_id artifact_id created_at expires_at')`.
 */
export const table =
  <Row>() =>
  <C extends string>(
    name: string,
    columns: C & Matches<Words<C>, Row>,
    kinds: Partial<Record<Words<C>, Kind>> = {},
  ): Table<Row> =>
    new Table<Row>(name, columns, kinds);

/**
 * Several tables in one row of a join, read as an array of values: an object keyed by aliased
 * column, split by prefix, cost as much as the query itself on the hottest reads.
 * `new Joined({ a: ARTIFACTS, t: TENANTS })` gives the select list (`a.id, …, t.id, …`) and takes
 * each row back out by position.
 */
export class Joined<T extends Record<string, Table<unknown>>> {
  readonly list: string;
  private readonly offsets: Record<keyof T, number>;

  constructor(private readonly tables: T) {
    const offsets = {} as Record<keyof T, number>;
    let offset = 0;
    for (const alias of Object.keys(tables) as (keyof T & string)[]) {
      offsets[alias] = offset;
      offset += tables[alias]!.columns.length;
    }
    this.offsets = offsets;
    this.list = (Object.keys(tables) as (keyof T & string)[]).map((a) => tables[a]!.qualified(a)).join(', ');
  }

  read<A extends keyof T>(values: readonly unknown[], alias: A): RowOf<T[A]> | null {
    return this.tables[alias]!.readAt(values, this.offsets[alias]) as RowOf<T[A]> | null;
  }
}

type RowOf<X> = X extends Table<infer R> ? R : never;
