import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { endToEndHeaders } from './proxy-headers.js';

/**
 * A real HTTP proxy in front of a real Cairn, for resumable uploads: it forwards every request
 * (rewriting the server's absolute `Location` to point back at the proxy, unless told not to),
 * counts the request body bytes it forwards, and on demand slows request bodies down, cuts the
 * next PATCH after some bytes (the server keeps what arrived), or answers a request itself (an
 * older server's 404, a 429, a 503) instead of forwarding it.
 */

export interface SeenRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Request body bytes forwarded to the server. */
  bodyBytes: number;
  /** When the request arrived (Date.now()). */
  at: number;
}

export interface CannedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

interface Rule {
  method: string;
  pathPrefix: string;
  answer?: CannedAnswer;
  cutAfterBytes?: number;
}

export class TusProxy {
  readonly seen: SeenRequest[] = [];
  /** Request bodies are forwarded at most this fast (bytes per second); null: as fast as they come. */
  bytesPerSecond: number | null = null;
  /** Whether the server's `Location` is rewritten to the proxy's origin (false: it names the server's). */
  rewriteLocation = true;
  url = '';
  private readonly rules: Rule[] = [];
  /** Requests being forwarded now: both ends, to cut them. */
  private readonly inFlight = new Set<{ req: http.IncomingMessage; up: http.ClientRequest }>();
  private server!: http.Server;

  constructor(private readonly target: string) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  /** Forgets what was seen and every pending rule; stops throttling. */
  reset(): this {
    this.seen.length = 0;
    this.rules.length = 0;
    this.bytesPerSecond = null;
    this.rewriteLocation = true;
    return this;
  }

  /** The next request with this method and path prefix is answered by the proxy (body read first). */
  answerNext(method: string, pathPrefix: string, answer: CannedAnswer): this {
    this.rules.push({ method, pathPrefix, answer });
    return this;
  }

  /** The next PATCH is forwarded for `bytes` of its body, then both connections are torn down. */
  cutNextPatchAfter(bytes: number): this {
    this.rules.push({ method: 'PATCH', pathPrefix: '/v1/uploads/tus/', cutAfterBytes: bytes });
    return this;
  }

  /**
   * Tears down every request being forwarded, at once: what the server has is all it gets. (A
   * killed client's last writes still sit in the kernel's buffers on loopback, megabytes of them,
   * and would otherwise go on trickling through.)
   */
  cutAll(): void {
    for (const { req, up } of this.inFlight) {
      up.destroy();
      req.socket.destroy();
    }
    this.inFlight.clear();
  }

  /** Body bytes of the PATCHes seen (what the client actually got through to the server). */
  patchedBytes(): number {
    return this.seen.filter((r) => r.method === 'PATCH').reduce((n, r) => n + r.bodyBytes, 0);
  }

  /** `METHOD /path` of every request seen, in order. */
  lines(): string[] {
    return this.seen.map((r) => `${r.method} ${r.path}`);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const seen: SeenRequest = { method, path, headers: req.headers, bodyBytes: 0, at: Date.now() };
    this.seen.push(seen);
    const at = this.rules.findIndex((r) => r.method === method && path.startsWith(r.pathPrefix));
    const rule = at >= 0 ? this.rules.splice(at, 1)[0] : undefined;
    if (rule?.answer) {
      const answer = rule.answer;
      req.resume();
      req.on('end', () => {
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      });
      return;
    }
    const up = http.request(this.target + path, { method, headers: req.headers }, (r) => {
      const headers = endToEndHeaders(r.headers);
      if (this.rewriteLocation && typeof headers.location === 'string')
        headers.location = headers.location.replace(this.target, this.url);
      res.writeHead(r.statusCode ?? 502, headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    const pair = { req, up };
    this.inFlight.add(pair);
    res.on('close', () => this.inFlight.delete(pair));
    // The client went away (killed, or cut): the server sees its request end early, as it would.
    req.on('close', () => {
      if (!req.complete) up.destroy();
    });
    void this.pump(req, up, seen, rule?.cutAfterBytes ?? null).catch(() => {
      up.destroy();
      req.destroy();
    });
  }

  /** Copies the request body upstream, throttled and counted, cutting it after `cutAfter` bytes. */
  private async pump(
    req: http.IncomingMessage,
    up: http.ClientRequest,
    seen: SeenRequest,
    cutAfter: number | null,
  ): Promise<void> {
    const started = Date.now();
    for await (const chunk of req as AsyncIterable<Buffer>) {
      for (let i = 0; i < chunk.length; i += 16 * 1024) {
        let piece = chunk.subarray(i, i + 16 * 1024);
        if (cutAfter !== null && seen.bodyBytes + piece.length >= cutAfter) {
          piece = piece.subarray(0, cutAfter - seen.bodyBytes);
          seen.bodyBytes += piece.length;
          // Let the bytes reach the server before the connection goes, as on a real drop.
          await new Promise<void>((r) => up.write(piece, () => r()));
          await sleep(200);
          up.destroy();
          req.socket.destroy();
          return;
        }
        seen.bodyBytes += piece.length;
        if (!up.write(piece)) await new Promise((r) => up.once('drain', r));
        if (this.bytesPerSecond !== null) {
          const due = started + (seen.bodyBytes / this.bytesPerSecond) * 1000;
          if (due > Date.now()) await sleep(due - Date.now());
        }
      }
    }
    up.end();
  }
}
