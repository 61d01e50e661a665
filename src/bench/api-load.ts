import { sequentialLatency } from './latency.js';
import { type LoadResult, load, smallUploadRequests } from './load.js';
import type { Seeded } from './seed.js';

/** The HTTP load figures of one server (Cairn or a baseline): JSON GETs, list pages, small uploads. */
export interface Durations {
  /** Seconds of warm-up before each measured run. */
  warm: number;
  get: number;
  list: number;
  small: number;
}

export const LIST_SHAPES = ['first page', 'deep cursor page', 'metadata.k=v page', 'session_id page'] as const;
export type ListShape = (typeof LIST_SHAPES)[number];

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

export interface GetTarget {
  key: string;
  id: string;
}

/**
 * GET /v1/artifacts/{id} at 50 connections. The warm-up reads another tenant's artifact so the
 * measured tenant's monthly request quota (100,000 on Pro) is not spent before the run.
 */
export async function getLoad(url: string, warm: GetTarget, measured: GetTarget, d: Durations): Promise<LoadResult> {
  const opts = (t: GetTarget) => ({ url: `${url}/v1/artifacts/${t.id}`, connections: 50, headers: auth(t.key) });
  if (d.warm > 0) await load('GET warm-up', { ...opts(warm), duration: d.warm });
  return load('GET', { ...opts(measured), duration: d.get });
}

/** Latency of the four list shapes, one request at a time (no queueing), newest 50 each. */
export async function listLoads(
  url: string,
  key: string,
  seeded: Seeded,
  d: Durations,
): Promise<Record<ListShape, LoadResult>> {
  const paths: Record<ListShape, string> = {
    'first page': '/v1/artifacts?limit=50',
    'deep cursor page': `/v1/artifacts?limit=50&cursor=${seeded.deepCursor}`,
    'metadata.k=v page': `/v1/artifacts?limit=50&${seeded.metadataFilter}`,
    'session_id page': `/v1/artifacts?limit=50&session_id=${seeded.sessionId}`,
  };
  const out: Partial<Record<ListShape, LoadResult>> = {};
  for (const shape of LIST_SHAPES) {
    const target = url + paths[shape];
    if (d.warm > 0) await sequentialLatency(target, auth(key), Math.min(d.warm, 1));
    out[shape] = await sequentialLatency(target, auth(key), d.list);
  }
  return out as Record<ListShape, LoadResult>;
}

/** Multipart uploads of distinct 4 KB files at 20 connections. */
export async function smallUploadLoad(url: string, key: string, d: Durations): Promise<LoadResult> {
  const run = (label: string, duration: number) =>
    load(label, { url, connections: 20, duration, requests: smallUploadRequests(key, 4096) });
  if (d.warm > 0) await run('small uploads warm-up', d.warm);
  return run('small uploads', d.small);
}
