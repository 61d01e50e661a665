import type { Dialect } from '../sql/dialect.js';

/** What SQLite spells its own way (see Dialect). */
export const SQLITE: Dialect = {
  types: {
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
  },
  forUpdate: '',
  forNoKeyUpdate: '',
  skipLocked: '',
  indexedBy: (index) => `INDEXED BY ${index}`,
  greatest: 'max',
  least: 'min',
  inList: (column) => `${column} IN (SELECT value FROM json_each(?))`,
  list: (values) => JSON.stringify(values),
  jsonRows: 'json_each(?) AS j',
  fence: '',
  blind: () => '?',
  digestsLongMetadata: false,
  batchesReads: false,
};
