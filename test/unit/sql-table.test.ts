import { describe, expect, it } from 'vitest';
import { Joined, Table, table } from '../../src/adapters/sql/table.js';

interface Thing {
  id: string;
  createdAt: number;
  live: boolean;
  metadata: Record<string, unknown>;
}

const THINGS = table<Thing>()('things', 'id created_at live metadata', { live: 'bool', metadata: 'json' });
const OTHERS = table<{ id: string }>()('others', 'id');

describe('Table', () => {
  it('reads a stored record into the row, decoding booleans (0/1 or boolean) and JSON (text or parsed)', () => {
    expect(THINGS.read({ id: 'a', created_at: 5, live: 1, metadata: '{"k":"v"}' })).toEqual({
      id: 'a',
      createdAt: 5,
      live: true,
      metadata: { k: 'v' },
    });
    expect(THINGS.read({ id: 'b', created_at: 6, live: false, metadata: { n: 1 } })).toEqual({
      id: 'b',
      createdAt: 6,
      live: false,
      metadata: { n: 1 },
    });
    expect(THINGS.read(null)).toBeNull();
  });

  it('reads each table of a join by position, a LEFT JOIN miss as null', () => {
    const J = new Joined({ t: THINGS, o: OTHERS });
    expect(J.list).toBe('t.id, t.created_at, t.live, t.metadata, o.id');
    const v = ['a', 5, 0, '[]', null];
    expect(J.read(v, 't')).toEqual({ id: 'a', createdAt: 5, live: false, metadata: [] });
    expect(J.read(v, 'o')).toBeNull();
    expect(J.read(['a', 5, 1, 'null', 'x'], 'o')).toEqual({ id: 'x' });
  });

  it('writes the row back in column order, JSON as text', () => {
    expect(THINGS.insert).toBe('INSERT INTO things (id, created_at, live, metadata) VALUES (?, ?, ?, ?)');
    expect(THINGS.values({ id: 'a', createdAt: 5, live: true, metadata: { k: 'v' } })).toEqual([
      'a',
      5,
      true,
      '{"k":"v"}',
    ]);
  });

  it('refuses a column name that is not a plain identifier (names are compiled into the readers)', () => {
    expect(() => new Table('t', 'id x:process.exit()', {})).toThrow(/not a plain identifier/);
    expect(() => new Table('t', 'id Name', {})).toThrow(/not a plain identifier/);
  });
});
