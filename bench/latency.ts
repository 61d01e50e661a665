import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LoadResult } from './load.js';

/**
 * Latency of one request shape with no queueing: one keep-alive connection, one request at a
 * time, each timed with the high-resolution clock. autocannon rounds latencies to whole
 * milliseconds, which hides the difference between a 0.3 ms and a 0.9 ms list page; the
 * throughput figures still come from autocannon.
 *
 * A probe can run in several slices that add to one set of samples, so that two servers can be
 * measured in turns (see interleavedLatency).
 */
class LatencyProbe {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly samples: number[] = [];
  private seconds = 0;

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  /** Requests for `seconds`; recorded unless it is a warm-up. */
  async run(seconds: number, record = true): Promise<void> {
    const until = performance.now() + seconds * 1000;
    do {
      const t = performance.now();
      const status = await get(this.url, this.headers, this.agent);
      if (status !== 200) throw new Error(`GET ${this.url} → ${status}`);
      if (record) this.samples.push(performance.now() - t);
    } while (performance.now() < until);
    if (record) this.seconds += seconds;
  }

  result(): LoadResult {
    const samples = [...this.samples].sort((a, b) => a - b);
    const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
    return { reqPerSec: samples.length / this.seconds, p50: at(0.5), p99: at(0.99), total: samples.length };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Half-second turns: short enough that a busy spell of a shared machine lands on both sides. */
export const TURN_SECONDS = 0.5;

/**
 * The latency of one request shape on each of several servers (or one): each warms up, then they
 * take turns of `turnSeconds` until each has run `seconds`. Measured one after the other instead
 * (5 s, then 5 s), a few busy seconds of the machine fell on one side only; on this 2-core VM that
 * moved the PostgreSQL/SQLite p50 ratio of a list shape between 1.05 and 1.88× and the p99 ratio
 * up to 2.3× from one run to the next, against 1.15–1.34× (once 1.55×) and up to 1.75× in turns.
 */
export async function interleavedLatency<S extends string>(
  targets: Record<S, { url: string; headers: Record<string, string> }>,
  seconds: number,
  warmSeconds: number,
  turnSeconds = TURN_SECONDS,
): Promise<Record<S, LoadResult>> {
  const sides = Object.keys(targets) as S[];
  const probes = sides.map((side) => new LatencyProbe(targets[side].url, targets[side].headers));
  try {
    if (warmSeconds > 0) for (const probe of probes) await probe.run(warmSeconds, false);
    const turns = Math.max(1, Math.round(seconds / turnSeconds));
    for (let turn = 0; turn < turns; turn++) for (const probe of probes) await probe.run(seconds / turns);
    return Object.fromEntries(sides.map((side, i) => [side, probes[i]!.result()])) as Record<S, LoadResult>;
  } finally {
    for (const probe of probes) probe.close();
  }
}

function get(url: string, headers: Record<string, string>, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent }, (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
