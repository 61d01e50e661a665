import { createReadStream } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';

/** A result with how long it took: large transfers over node:http, from first byte sent to last byte received. */
export interface Timed<T> {
  ms: number;
  value: T;
}

/**
 * A request with a body, timed: `ms` until the whole answer arrived, and `sentMs` until the last
 * byte of the body was handed to the socket. What lies between is the server's work after the
 * bytes (making them durable, hashing, recording), as the client waits for it.
 */
export interface TimedSend extends Timed<Sent> {
  sentMs: number;
}

interface Sent {
  status: number;
  body: string;
}

function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  parts: (Buffer | { file: string; bytes: number })[],
): Promise<TimedSend> {
  const u = new URL(url);
  const length = parts.reduce((n, p) => n + (Buffer.isBuffer(p) ? p.length : p.bytes), 0);
  const started = performance.now();
  let sentMs = Number.NaN;
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      method,
      agent: false,
      headers: { ...headers, 'content-length': String(length) },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
      });
      res.on('end', () =>
        resolve({ ms: performance.now() - started, sentMs, value: { status: res.statusCode ?? 0, body } }),
      );
      res.on('error', reject);
    });
    (async () => {
      for (const part of parts) {
        if (Buffer.isBuffer(part)) {
          if (!req.write(part)) await new Promise((r) => req.once('drain', r));
          continue;
        }
        const file = createReadStream(part.file, { start: 0, end: part.bytes - 1, highWaterMark: 1024 * 1024 });
        await pipeline(file, req, { end: false });
      }
      req.end(() => {
        sentMs = performance.now() - started;
      });
    })().catch(reject);
  });
}

/**
 * POST /v1/artifacts multipart with the first `bytes` of `file` as the file part; `fields` go
 * before it, and `prefix` (bytes) before the file's own, so one source file makes distinct files.
 */
export function uploadMultipart(
  apiUrl: string,
  key: string,
  file: string,
  bytes: number,
  filename: string,
  fields: Record<string, string> = {},
  prefix: Buffer = Buffer.alloc(0),
) {
  const boundary = `----cairnBench${Math.random().toString(16).slice(2)}`;
  const fieldParts = Object.entries(fields)
    .map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('');
  const head = Buffer.concat([
    Buffer.from(
      `${fieldParts}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    prefix,
  ]);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return send(
    `${apiUrl}/v1/artifacts`,
    'POST',
    { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    [head, { file, bytes }, tail],
  );
}

/** PUT the first `bytes` of `file` as the raw body. */
export function putFile(url: string, file: string, bytes: number, headers: Record<string, string> = {}) {
  return sendFile('PUT', url, file, bytes, { 'content-type': 'application/octet-stream', ...headers });
}

/** `method` with the first `bytes` of `file` as the raw body (streamed from the disk). */
export function sendFile(method: string, url: string, file: string, bytes: number, headers: Record<string, string>) {
  return send(url, method, headers, [{ file, bytes }]);
}

/** GET `url`, counting and discarding the body. */
export function download(url: string): Promise<Timed<{ status: number; bytes: number }>> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          bytes += d.length;
        });
        res.on('end', () =>
          resolve({ ms: performance.now() - started, value: { status: res.statusCode ?? 0, bytes } }),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** JSON call against the API with a key. */
export async function apiCall<T>(
  apiUrl: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(apiUrl + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export const mbPerSec = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
