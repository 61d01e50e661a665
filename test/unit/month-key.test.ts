import { expect, it } from 'vitest';
import { monthKey } from '../../src/core/time.js';

/** monthKey caches the current month; moments on both sides of every boundary, in any order. */
it('names the UTC month of any moment, across month and year boundaries and back', () => {
  const moments = [
    Date.UTC(2026, 0, 1),
    Date.UTC(2026, 0, 31, 23, 59, 59, 999),
    Date.UTC(2026, 1, 1),
    Date.UTC(2025, 11, 31, 23, 59, 59, 999),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(2027, 0, 1),
    Date.UTC(2026, 0, 15),
    Date.UTC(2024, 1, 29, 12),
  ];
  for (const ms of moments)
    expect(monthKey(ms), new Date(ms).toISOString()).toBe(new Date(ms).toISOString().slice(0, 7));
});
