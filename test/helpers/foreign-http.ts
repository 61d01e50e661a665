import { parseHead, rawConnect } from './raw-http.js';

/**
 * Requests written byte for byte the way other people's HTTP clients write them, not the way
 * fetch or our SDK does: header names spelled as given (upper case included), a JSON content
 * type on a request with no body, and the three ways of sending nothing (`Content-Length: 0`,
 * chunked with no bytes, no length header at all).
 */

/** How the body (possibly empty) is framed: `length` sends Content-Length, `chunked` Transfer-Encoding, `none` neither. */
export type Framing = 'length' | 'chunked' | 'none';

export interface ForeignRequest {
  method: string;
  path: string;
  /** Sent exactly as spelled, after Host. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Default `length` (with a body) or `none` (without). */
  framing?: Framing;
  /** Chunk size when chunked (default: the whole body in one chunk). */
  chunkSize?: number;
}

export interface ForeignResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON, checked field by field by the tests
  json: any;
}

/** The request's bytes (HTTP/1.1, `Connection: close`, so the answer ends with the connection). */
export function foreignRequestBytes(origin: string, req: ForeignRequest): Buffer {
  const body = req.body === undefined ? Buffer.alloc(0) : Buffer.from(req.body);
  const framing = req.framing ?? (req.body === undefined ? 'none' : 'length');
  const lines = [`${req.method} ${req.path} HTTP/1.1`, `Host: ${new URL(origin).host}`];
  for (const [k, v] of Object.entries(req.headers ?? {})) lines.push(`${k}: ${v}`);
  lines.push('Connection: close');
  if (framing === 'length') lines.push(`Content-Length: ${body.length}`);
  if (framing === 'chunked') lines.push('Transfer-Encoding: chunked');
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
  if (framing !== 'chunked') return Buffer.concat([head, body]);
  const parts: Buffer[] = [head];
  const size = req.chunkSize ?? Math.max(body.length, 1);
  for (let i = 0; i < body.length; i += size) {
    const chunk = body.subarray(i, i + size);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** Sends one request on its own connection and reads the answer (Content-Length or chunked). */
export async function foreign(origin: string, req: ForeignRequest, timeoutMs = 15_000): Promise<ForeignResponse> {
  const conn = await rawConnect(origin);
  const timer = setTimeout(() => conn.destroy(), timeoutMs);
  conn.write(foreignRequestBytes(origin, req));
  const raw = Buffer.from(await conn.closed, 'latin1');
  clearTimeout(timer);
  return parseOne(raw, req.method === 'HEAD');
}

function parseOne(raw: Buffer, head: boolean): ForeignResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete response: ${raw.toString('latin1').slice(0, 200)}`);
  const { status, headers } = parseHead(raw.subarray(0, end).toString('latin1'));
  let body = raw.subarray(end + 4);
  if (head) body = Buffer.alloc(0);
  else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  const text = body.toString('utf8');
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status, headers, text, json };
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = Number.parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!size) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}
