import { setTimeout as sleep } from 'node:timers/promises';
import { CairnError } from './errors.js';
import { type Answer, nodeRequest } from './node-request.js';

export type { Answer } from './node-request.js';

export interface TransportConfig {
  baseUrl: string;
  apiKey: string;
  maxRetries: number;
  timeoutMs: number;
  userAgent: string;
  /** A caller's fetch for the calls without a streamed body; otherwise they go out with node:http. */
  fetch?: typeof fetch;
}

/** A streamed request body; `open` is called once per attempt. */
export interface StreamingBody {
  open(): Promise<AsyncIterable<Uint8Array>>;
  contentType: string;
  contentLength: number | null;
  /** False when the source cannot be read twice (a caller's stream): then no retry at all. */
  reopenable: boolean;
}

export interface Call {
  method: 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under the base URL ('/v1/…'), or an absolute URL with `absolute`. */
  path: string;
  absolute?: boolean;
  query?: Record<string, string | undefined>;
  json?: unknown;
  stream?: StreamingBody;
  headers?: Record<string, string>;
  /** Default true; false for /health and /v1/public/*, and for URLs on other origins. */
  auth?: boolean;
  /** Safe to repeat after a 5xx or a network error (see the SDK docs). */
  idempotent: boolean;
  /** The caller reads the body as a stream: the timeout then covers only the wait for the headers. */
  streamResponse?: boolean;
  /** A call the server may legitimately take this long to answer: the timeout is at least this. */
  minTimeoutMs?: number;
  /** `303 See Other` is the answer (its body says where), not an error: the archive calls. */
  seeOther?: boolean;
}

/** Waits longer than this are not worth sleeping through inside a library call. */
const MAX_RETRY_WAIT_S = 60;
const BACKOFF_BASE_MS = 200;

/**
 * Final errors that came after an attempt whose outcome is unknown (a 5xx or a network error, then
 * a retry): the first attempt may have done the work, so e.g. a DELETE's 410 may be its own success.
 */
const afterUncertainAttempt = new WeakSet<CairnError>();

/** Whether `err` was answered to a retry that followed a 5xx or network error (see above). */
export function followedUncertainAttempt(err: unknown): boolean {
  return err instanceof CairnError && afterUncertainAttempt.has(err);
}

export class Transport {
  constructor(readonly config: TransportConfig) {}

  /** Sends the call with the retry policy and returns the 2xx response (body unread: read or cancel it). */
  async send(call: Call): Promise<Answer> {
    const max = call.stream && !call.stream.reopenable ? 0 : this.config.maxRetries;
    // Set once an attempt failed in a way that leaves its outcome unknown (5xx, network error).
    let uncertain = false;
    const final = (error: CairnError) => {
      if (uncertain) afterUncertainAttempt.add(error);
      return error;
    };
    for (let attempt = 0; ; attempt++) {
      let res: Answer;
      // For a streamed upload: the server may answer (an error) before reading all of the body;
      // aborting then tears the connection down instead of leaving a half-sent request on it.
      const upload = call.stream ? new AbortController() : undefined;
      try {
        res = await this.once(call, upload?.signal);
      } catch (err) {
        const error = networkError(err);
        if (attempt < max && call.idempotent) {
          uncertain = true;
          await sleep(backoffMs(attempt));
          continue;
        }
        throw final(error);
      }
      if (res.ok || (call.seeOther && res.status === 303)) return res;
      const error = await errorFromResponse(res);
      upload?.abort();
      if (attempt >= max) throw final(error);
      if (res.status === 429) {
        // The server refused before doing anything, so this is safe for every call.
        await sleep(retryWaitMs(error, attempt));
        continue;
      }
      if (res.status >= 500 && call.idempotent) {
        uncertain = true;
        await sleep(backoffMs(attempt));
        continue;
      }
      throw final(error);
    }
  }

  /** send() then parse the JSON body. */
  async json<T>(call: Call): Promise<T> {
    return (await this.jsonWithHeaders<T>(call)).body;
  }

  /** json(), keeping the response headers (e.g. `Idempotent-Replayed`). */
  async jsonWithHeaders<T>(call: Call): Promise<{ body: T; headers: Answer['headers'] }> {
    const res = await this.send(call);
    const text = await res.text().catch((err: unknown) => {
      throw networkError(err);
    });
    try {
      return { body: JSON.parse(text) as T, headers: res.headers };
    } catch {
      throw new CairnError({
        code: 'invalid_response',
        message: `Expected JSON from ${call.method} ${call.path}, got: ${text.slice(0, 120)}`,
        status: res.status,
        requestId: res.headers.get('x-request-id'),
      });
    }
  }

  private async once(call: Call, uploadSignal?: AbortSignal): Promise<Answer> {
    const url = new URL(call.absolute ? call.path : this.config.baseUrl + call.path);
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const headers: Record<string, string> = { 'user-agent': this.config.userAgent, ...call.headers };
    if (call.auth !== false) headers.authorization = `Bearer ${this.config.apiKey}`;
    if (call.stream) {
      headers['content-type'] = call.stream.contentType;
      if (call.stream.contentLength !== null) headers['content-length'] = String(call.stream.contentLength);
      const body = await call.stream.open();
      return nodeRequest(url, { method: call.method, headers, body, signal: uploadSignal });
    }
    let body: string | undefined;
    if (call.json !== undefined) {
      body = JSON.stringify(call.json);
      headers['content-type'] = 'application/json';
    }
    // Streamed bodies (upload above, or a download read by the caller) may take longer than any fixed timeout.
    const ms = this.config.timeoutMs <= 0 ? 0 : Math.max(this.config.timeoutMs, call.minTimeoutMs ?? 0);
    if (ms <= 0) return this.request(url, call.method, headers, body);
    if (!call.streamResponse) return this.request(url, call.method, headers, body, AbortSignal.timeout(ms));
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(new DOMException('Timed out waiting for headers', 'TimeoutError')), ms);
    timer.unref();
    try {
      return await this.request(url, call.method, headers, body, ctl.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A call without a streamed body: through the caller's fetch when one was given. */
  private request(
    url: URL,
    method: string,
    headers: Record<string, string>,
    body: string | undefined,
    signal?: AbortSignal,
  ): Promise<Answer> {
    if (this.config.fetch) return this.config.fetch(url, { method, headers, body, signal });
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    return nodeRequest(url, { method, headers, body, signal });
  }
}

/** The server's Retry-After (capped at MAX_RETRY_WAIT_S) when it sent one, else the backoff. */
export function retryWaitMs(error: CairnError, attempt: number): number {
  return error.retryAfter !== null ? Math.min(error.retryAfter, MAX_RETRY_WAIT_S) * 1000 : backoffMs(attempt);
}

/** The wait before retry number `attempt + 1`: 200 ms doubling, plus up to 50 % jitter, at most 5 s. */
function backoffMs(attempt: number): number {
  const base = BACKOFF_BASE_MS * 2 ** attempt;
  return Math.min(base + Math.random() * base * 0.5, 5_000);
}

function networkError(err: unknown): CairnError {
  if (err instanceof CairnError) return err;
  const e = err as { name?: string; message?: string; cause?: { name?: string; message?: string; code?: string } };
  // fetch throws the signal's TimeoutError itself; node:http an AbortError caused by it.
  const timedOut = e?.name === 'TimeoutError' || (e?.name === 'AbortError' && e.cause?.name === 'TimeoutError');
  const detail = e?.cause?.message ?? e?.cause?.code ?? e?.message ?? String(err);
  return new CairnError({
    code: 'network_error',
    message: timedOut ? 'Request timed out.' : `Network error: ${detail}`,
    status: 0,
    cause: err,
  });
}

/** Parses `Retry-After` as seconds or as an HTTP date. */
function parseRetryAfter(header: string | null): number | null {
  if (!header) return null;
  const n = Number(header);
  if (Number.isFinite(n) && n >= 0) return n;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

interface Envelope {
  error?: {
    code?: unknown;
    message?: unknown;
    retry_after_seconds?: unknown;
    upgrade_url?: unknown;
    request_id?: unknown;
  };
}

export async function errorFromResponse(res: Answer): Promise<CairnError> {
  const text = await res.text().catch(() => '');
  let env: Envelope | null = null;
  try {
    env = JSON.parse(text) as Envelope;
  } catch {
    env = null;
  }
  const e = env && typeof env === 'object' ? env.error : undefined;
  const retryAfter =
    typeof e?.retry_after_seconds === 'number'
      ? e.retry_after_seconds
      : parseRetryAfter(res.headers.get('retry-after'));
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return new CairnError({
    code:
      str(e?.code) ?? (res.status === 429 ? 'rate_limited' : res.status >= 500 ? 'server_error' : 'invalid_response'),
    message: str(e?.message) ?? `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    status: res.status,
    retryAfter,
    upgradeUrl: str(e?.upgrade_url),
    requestId: str(e?.request_id) ?? res.headers.get('x-request-id'),
  });
}
