import { describe, expect, it } from 'vitest';
import { formatCount } from '../../src/shared/units.js';

describe('formatCount', () => {
  it("writes what toLocaleString('en-US') writes for whole numbers: group boundaries, signs, the safe range", () => {
    const samples = [0, 1, 12, 123, 999, 1000, 1001, 9999, 10_000, 99_999, 100_000, 999_999, 1_000_000, 10_485_760];
    for (let p = 0; p <= 15; p++) samples.push(10 ** p - 1, 10 ** p, 10 ** p + 1);
    samples.push(Number.MAX_SAFE_INTEGER);
    let seed = 42;
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      samples.push(seed * (seed % 7), seed % 100_000);
    }
    for (const n of [...samples, ...samples.filter((x) => x !== 0).map((x) => -x)]) {
      if (!Number.isSafeInteger(n)) continue;
      expect(formatCount(n), String(n)).toBe(n.toLocaleString('en-US'));
    }
  });

  it('leaves what is no safe whole number as JavaScript writes it', () => {
    expect(formatCount(1.5)).toBe('1.5');
    expect(formatCount(Number.NaN)).toBe('NaN');
    expect(formatCount(2 ** 60)).toBe(String(2 ** 60));
  });
});
