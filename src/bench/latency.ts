import http from 'node:http';
import { performance } from 'node:perf_hooks';
import type { LoadResult } from './load.js';

/**
 * Latency of one request shape with no queueing: one keep-alive connection, one request at a
 * time, each timed with the high-resolution clock. autocannon rounds latencies to whole
 * milliseconds, which hides the difference between a 0.3 ms and a 0.9 ms list page; the
 * throughput figures still come from autocannon.
 */
export async function sequentialLatency(
  url: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  const until = performance.now() + seconds * 1000;
  try {
    do {
      const t = performance.now();
      const status = await get(url, headers, agent);
      if (status !== 200) throw new Error(`GET ${url} → ${status}`);
      samples.push(performance.now() - t);
    } while (performance.now() < until);
  } finally {
    agent.destroy();
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return { reqPerSec: samples.length / seconds, p50: at(0.5), p99: at(0.99), total: samples.length };
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
