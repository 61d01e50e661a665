import type { Dialect } from '../sql/dialect.js';

/** What PostgreSQL spells its own way (see Dialect). */
export const POSTGRES: Dialect = {
  types: {
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
  },
  forUpdate: ' FOR UPDATE',
  forNoKeyUpdate: ' FOR NO KEY UPDATE',
  skipLocked: ' FOR UPDATE SKIP LOCKED',
  indexedBy: () => '',
  greatest: 'greatest',
  least: 'least',
  inList: (column) => `${column} = ANY(?)`,
  list: (values) => values,
  jsonRows: 'json_array_elements(?::json) AS j (value)',
  fence: ' OFFSET 0',
  blind: (value) => `(SELECT ?::${typeof value === 'number' ? 'bigint' : 'text'})`,
  digestsLongMetadata: true,
  batchesReads: true,
};
