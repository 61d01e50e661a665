import { expect, it } from 'vitest';
import { toIso } from '../../src/core/time.js';

/** toIso formats dates itself; it must write exactly what Date#toISOString writes. */
it('writes what Date#toISOString writes: boundaries, leap days, centuries, random moments', () => {
  const moments = [
    0,
    -1,
    1,
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    Date.UTC(2000, 1, 29, 12, 34, 56, 789),
    Date.UTC(1900, 1, 28, 23, 59, 59, 999),
    Date.UTC(1900, 2, 1),
    Date.UTC(2100, 1, 28, 23, 59, 59, 999),
    Date.UTC(2024, 1, 29),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    Date.UTC(10000, 0, 1),
    Date.UTC(0, 0, 1) - 1,
    -62_167_219_200_000,
    Date.UTC(999, 5, 6, 7, 8, 9, 10),
    Date.UTC(45, 0, 1),
    8.64e15,
    -8.64e15,
  ];
  // A fixed-seed walk over five millennia, so a failure is the same on every run.
  let seed = 42;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  for (let i = 0; i < 20_000; i++) moments.push(Math.floor((next() - 0.3) * 1.6e14));
  for (const ms of moments) expect(toIso(ms), String(ms)).toBe(new Date(ms).toISOString());
});

it('refuses what Date refuses', () => {
  expect(() => toIso(Number.NaN)).toThrow(RangeError);
  expect(() => toIso(8.64e15 + 1)).toThrow(RangeError);
});
