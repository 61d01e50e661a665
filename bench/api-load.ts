import { interleavedLatency } from './latency.js';
import { type LoadResult, load, smallUploadRequests } from './load.js';
import type { Seeded } from './seed.js';

/** The HTTP load figures of one server (Cairn or a baseline): JSON GETs, list pages, small uploads. */
export interface Durations {
  /** Seconds of warm-up before the measured runs. */
  warm: number;
  /**
   * Throughput figures are the best of this many runs, Cairn's alternating with its baseline's:
   * on a shared machine one run of either can land on a busy moment, and alternating lets both
   * sides meet the same moments.
   */
  rounds: number;
  /** Seconds of each GET run and each small-upload run. */
  get: number;
  list: number;
  small: number;
}

export const LIST_SHAPES = [
  'first page',
  'deep cursor page',
  'metadata.k=v page',
  'two metadata pairs page',
  'session_id page',
] as const;
export type ListShape = (typeof LIST_SHAPES)[number];

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

export interface GetTarget {
  key: string;
  id: string;
}

/** The run with the most requests per second. */
export const fastest = (runs: LoadResult[]): LoadResult =>
  runs.reduce((best, r) => (r.reqPerSec > best.reqPerSec ? r : best));

/**
 * `rounds` runs of each side, alternating, the best of each. `run(side, round)` does one run.
 * Sides warm up once first.
 */
export async function alternating<S extends string>(
  sides: readonly S[],
  d: Durations,
  run: (side: S, round: number, seconds: number) => Promise<LoadResult>,
  seconds: number,
): Promise<Record<S, LoadResult>> {
  if (d.warm > 0) for (const side of sides) await run(side, -1, d.warm);
  const runs = new Map<S, LoadResult[]>(sides.map((side) => [side, []]));
  for (let round = 0; round < d.rounds; round++) {
    for (const side of sides) runs.get(side)!.push(await run(side, round, seconds));
  }
  return Object.fromEntries(sides.map((side) => [side, fastest(runs.get(side)!)])) as Record<S, LoadResult>;
}

/**
 * GET /v1/artifacts/{id} at 50 connections for `seconds`, each connection going round `targets`
 * (a tenant's key and one of its artifacts each): one tenant's monthly quota (100,000 on Pro) is
 * a few seconds of this load.
 */
export function getLoad(url: string, targets: readonly GetTarget[], seconds: number): Promise<LoadResult> {
  return load('GET', {
    url,
    connections: 50,
    duration: seconds,
    requests: targets.map((t) => ({ method: 'GET', path: `/v1/artifacts/${t.id}`, headers: auth(t.key) })),
  });
}

const LIST_PATHS: Record<ListShape, (seeded: Seeded) => string> = {
  'first page': () => '/v1/artifacts?limit=50',
  'deep cursor page': (seeded) => `/v1/artifacts?limit=50&cursor=${seeded.deepCursor}`,
  'metadata.k=v page': (seeded) => `/v1/artifacts?limit=50&${seeded.metadataFilter}`,
  'two metadata pairs page': (seeded) => `/v1/artifacts?limit=50&${seeded.twoMetadataFilters}`,
  'session_id page': (seeded) => `/v1/artifacts?limit=50&session_id=${seeded.sessionId}`,
};

/** The request of one list shape: newest 50 of the seeded tenant. */
export function listTarget(
  url: string,
  key: string,
  seeded: Seeded,
  shape: ListShape,
): { url: string; headers: Record<string, string> } {
  return { url: url + LIST_PATHS[shape](seeded), headers: auth(key) };
}

/** Seconds of warm-up before a list shape is timed. */
export const listWarmSeconds = (d: Durations): number => Math.min(d.warm, 1);

/** Latency of one list shape, one request at a time (no queueing), newest 50. */
export async function listLoad(
  url: string,
  key: string,
  seeded: Seeded,
  shape: ListShape,
  d: Durations,
): Promise<LoadResult> {
  return (await interleavedLatency({ list: listTarget(url, key, seeded, shape) }, d.list, listWarmSeconds(d))).list;
}

/** Latency of the four list shapes, one after the other. */
export async function listLoads(
  url: string,
  key: string,
  seeded: Seeded,
  d: Durations,
): Promise<Record<ListShape, LoadResult>> {
  const out: Partial<Record<ListShape, LoadResult>> = {};
  for (const shape of LIST_SHAPES) out[shape] = await listLoad(url, key, seeded, shape, d);
  return out as Record<ListShape, LoadResult>;
}

/** Multipart uploads of distinct 4 KB files at 20 connections for `seconds`. */
export function smallUploadLoad(url: string, key: string, seconds: number): Promise<LoadResult> {
  return load('small uploads', { url, connections: 20, duration: seconds, requests: smallUploadRequests(key, 4096) });
}

/**
 * DELETE /v1/artifacts/{id} of each of `ids` once, at 20 connections: the delete path (the row
 * retired with its side effects in one transaction).
 */
export async function deleteLoad(url: string, key: string, ids: readonly string[]): Promise<LoadResult> {
  let next = 0;
  const started = performance.now();
  const r = await load('deletes', {
    url,
    connections: 20,
    amount: ids.length,
    requests: [
      {
        method: 'DELETE',
        headers: auth(key),
        setupRequest: (req) => ({ ...req, path: `/v1/artifacts/${ids[next++ % ids.length]}` }),
      },
    ],
  });
  // A run of a fixed amount: its rate is what it sent over how long it took.
  return { ...r, reqPerSec: r.total / ((performance.now() - started) / 1000) };
}
