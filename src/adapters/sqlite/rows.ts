import {
  type ApiKeyRecord,
  columnList,
  type LinkRecord,
  rowMappers,
  type SessionRecord,
  type ArtifactRecord as SharedArtifactRecord,
  type PageRecord as SharedPageRecord,
  type TenantRecord as SharedTenantRecord,
  toApiKey,
  toLink,
  toSession,
} from '../shared/metadata-rows.js';

export {
  API_KEY_COLUMNS,
  ARTIFACT_COLUMNS,
  LINK_COLUMNS,
  PAGE_COLUMNS,
  TENANT_COLUMNS,
} from '../shared/metadata-rows.js';
export { type ApiKeyRecord, type LinkRecord, type SessionRecord, toApiKey, toLink, toSession };

/** Rows as SQLite returns them: booleans as 0/1, metadata as JSON text. */
export type TenantRecord = SharedTenantRecord<number>;
export type ArtifactRecord = SharedArtifactRecord<string>;
export type PageRecord = SharedPageRecord<number>;

export const { toTenant, toArtifact, toPage } = rowMappers<number, string>({
  bool: (b) => b !== 0,
  metadata: (m) => JSON.parse(m) as Record<string, unknown>,
});

/**
 * The indexed form of a top-level metadata value: a string as itself, a number or boolean as its
 * JSON text; anything else (object, array, null) is not indexed and so never matches a filter.
 */
export function metadataIndexValue(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return null;
}

/**
 * Several records in one row of a join, read in better-sqlite3's raw mode (the row as an array).
 * Letting the driver build an object with a key per aliased column, then splitting it by prefix,
 * cost as much as the query itself on the hottest reads (a GET of a record, a key lookup).
 * `new JoinedColumns({ a: ARTIFACT_COLUMNS, t: TENANT_COLUMNS })` gives the select list
 * (`a.id, …, t.id, …`) and takes each record back out of the row by position.
 */
export class JoinedColumns<K extends string> {
  readonly list: string;
  private readonly parts: Record<K, { offset: number; columns: readonly string[] }>;
  private readonly statements = new Map<string, string>();

  constructor(parts: Record<K, readonly string[]>) {
    const lists: string[] = [];
    const at = {} as Record<K, { offset: number; columns: readonly string[] }>;
    let offset = 0;
    for (const alias of Object.keys(parts) as K[]) {
      const columns = parts[alias];
      at[alias] = { offset, columns };
      lists.push(columnList(alias, columns));
      offset += columns.length;
    }
    this.list = lists.join(', ');
    this.parts = at;
  }

  /**
   * `SELECT <list> <rest>`, the same string every call. Statements are cached by their SQL text,
   * and a text built anew per call (a template literal) is flattened and hashed whole at every
   * lookup, a measurable part of a GET; `rest` is a literal, whose hash V8 keeps.
   */
  select(rest: string): string {
    let sql = this.statements.get(rest);
    if (sql === undefined) {
      sql = `SELECT ${this.list} ${rest}`;
      this.statements.set(rest, sql);
    }
    return sql;
  }

  /** Part `alias` of a raw row; null when its first column (its key) is null, a LEFT JOIN's miss. */
  record<T>(values: readonly unknown[], alias: K): T | null {
    const { offset, columns } = this.parts[alias];
    if (values[offset] === null) return null;
    const out: Record<string, unknown> = {};
    for (let i = 0; i < columns.length; i++) out[columns[i]!] = values[offset + i];
    return out as T;
  }
}
