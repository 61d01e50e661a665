import { describe, expect, it } from 'vitest';
import { DENSITY_PROBE, sparsestFirst } from '../../src/adapters/sql/metadata-driver.js';

const pair = (key: string) => ({ key, value: 'v' });

describe('sparsestFirst: which metadata pair drives a list page', () => {
  it('puts the pair whose newest rows reach furthest back first', () => {
    // kind: 200 rows within the last 1,400 ms; batch: 200 rows over 20,000 ms, so ten times sparser.
    const kind = { n: DENSITY_PROBE, oldest: 100_000 - 1_400 };
    const batch = { n: DENSITY_PROBE, oldest: 100_000 - 20_000 };
    expect(sparsestFirst([pair('kind'), pair('batch')], [kind, batch]).map((m) => m.key)).toEqual(['batch', 'kind']);
  });

  it('a pair with fewer rows than the probe comes first, the fewest first; ties keep the given order', () => {
    const full = { n: DENSITY_PROBE, oldest: 1 };
    const few = { n: 3, oldest: 50 };
    const none = { n: 0, oldest: null };
    const order = sparsestFirst([pair('a'), pair('b'), pair('c'), pair('d')], [full, few, none, full]);
    expect(order.map((m) => m.key)).toEqual(['c', 'b', 'a', 'd']);
  });
});
