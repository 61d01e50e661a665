import { describe, expect, it } from 'vitest';
import { ProgressBar } from '../../src/cli/client/progress.js';

/** The progress bar keeps its length while its numbers change digits (it used to jump mid-upload). */
describe('ProgressBar', () => {
  it('the bar is the same length from start to end, whatever the rate and the ETA', () => {
    const writes: string[] = [];
    let now = 0;
    const stream = { isTTY: true, columns: 80, write: (s: string) => writes.push(s) };
    const total = 96_500_000;
    const bar = new ProgressBar('push big.bin', total, stream, () => now);
    // Slow, then fast, then slow again: the rate goes from bytes to tens of MB/s, the ETA from
    // hours to seconds.
    const steps: [number, number][] = [
      [500, 900],
      [1_000, 50_000],
      [3_000, 9_000_000],
      [4_000, 60_000_000],
      [60_000, 61_000_000],
      [61_000, total],
    ];
    for (const [at, done] of steps) {
      now = at;
      bar.update(done);
    }
    const bars = writes.map((w) => /\[([#-]+)\]/.exec(w)?.[1]?.length);
    expect(bars.length).toBe(steps.length);
    expect(new Set(bars).size, writes.join('\n')).toBe(1);
    for (const w of writes) expect(w.replace(/\r|\u001b\[K/g, '').length).toBeLessThanOrEqual(79);
  });
});
