import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { interleavedLatency } from '../../src/bench/latency.js';

/** A server that answers `status` and notes, in one shared log, which side each request reached. */
async function server(side: string, log: string[], status = 200): Promise<{ url: string; close(): Promise<void> }> {
  const s = http.createServer((req, res) => {
    log.push(side);
    res.statusCode = status;
    res.end(req.headers['x-side'] === side ? 'ok' : 'wrong headers');
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}/`;
  return { url, close: () => new Promise((resolve) => s.close(() => resolve())) };
}

describe('bench latency', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('times two servers in turns, after a warm-up that is not counted', async () => {
    const log: string[] = [];
    const a = await server('a', log);
    const b = await server('b', log);
    closers.push(a.close, b.close);
    const r = await interleavedLatency(
      { a: { url: a.url, headers: { 'x-side': 'a' } }, b: { url: b.url, headers: { 'x-side': 'b' } } },
      0.3,
      0.05,
      0.05,
    );
    // Runs of requests to one side: warm-up a, warm-up b, then six turns each (a, b, a, b, …).
    const runs: { side: string; count: number }[] = [];
    for (const side of log) {
      const last = runs.at(-1);
      if (last?.side === side) last.count++;
      else runs.push({ side, count: 1 });
    }
    expect(runs.map((run) => run.side)).toEqual([...'ab'.repeat(7)]);
    const timed = (side: string) =>
      runs
        .slice(2)
        .filter((run) => run.side === side)
        .reduce((sum, run) => sum + run.count, 0);
    expect(r.a.total).toBe(timed('a'));
    expect(r.b.total).toBe(timed('b'));
    for (const side of [r.a, r.b]) {
      expect(side.p50).toBeGreaterThan(0);
      expect(side.p99).toBeGreaterThanOrEqual(side.p50);
      expect(side.reqPerSec).toBeCloseTo(side.total / 0.3, 5);
    }
  });

  it('fails on an answer other than 200 instead of timing it', async () => {
    const log: string[] = [];
    const s = await server('a', log, 403);
    closers.push(s.close);
    await expect(interleavedLatency({ a: { url: s.url, headers: {} } }, 0.05, 0)).rejects.toThrow('→ 403');
  });
});
