import { createRequire } from 'node:module';
import { withUsage } from './usage.js';

/** The part of autocannon 8's programmatic API we use (it ships no type declarations). */
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
}
interface AutocannonOptions {
  url: string;
  connections: number;
  /** Seconds; or `amount`, a number of requests to send (then the run lasts as long as they take). */
  duration?: number;
  amount?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  requests?: AutocannonRequest[];
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  '2xx': number;
  statusCodeStats?: Record<string, { count: number }>;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (o: AutocannonOptions) => Promise<AutocannonResult>;

export interface LoadResult {
  reqPerSec: number;
  p50: number;
  p99: number;
  total: number;
  /** CPU time (µs, user + system) the server process used per request, where measured (withServerCpu). */
  serverCpuPerRequest?: number;
}

/**
 * `run` (one load against `server`) with the CPU time the server's process used per request.
 * Requests per second depend on how fast this shared machine is at that moment, for the baseline
 * more than for Cairn (the kernel's share of a request varies from one day to the next); the
 * server's CPU per request says how much work each request takes, whatever the moment.
 */
export async function withServerCpu(
  server: { call<T>(cmd: string): Promise<T> },
  run: () => Promise<LoadResult>,
): Promise<LoadResult> {
  const { value, usage } = await withUsage(server, run);
  return { ...value, serverCpuPerRequest: (usage.serverCpuS * 1e6) / value.total };
}

/** Runs one autocannon load; any non-2xx answer or socket error fails the bench rather than skewing it. */
export async function load(label: string, opts: AutocannonOptions): Promise<LoadResult> {
  const r = await autocannon(opts);
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
    throw new Error(
      `${label}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts ` +
        `(status codes ${JSON.stringify(r.statusCodeStats ?? {})})`,
    );
  }
  return { reqPerSec: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total };
}

/** A 4 KB-class multipart body whose file bytes differ per request, so every upload stores new bytes. */
export function smallUploadRequests(key: string, fileBytes: number): AutocannonRequest[] {
  const boundary = '----cairnBenchSmall';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="small.bin"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const file = Buffer.alloc(fileBytes, 'x');
  let n = 0;
  const salt = Math.random().toString(36).slice(2, 10);
  return [
    {
      method: 'POST',
      path: '/v1/artifacts',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      setupRequest(req) {
        const stamp = Buffer.from(`${salt}-${n++}-`);
        stamp.copy(file, 0);
        return { ...req, body: Buffer.concat([head, file, tail]) };
      },
    },
  ];
}
