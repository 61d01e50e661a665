import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { endToEndHeaders } from '../helpers/proxy-headers.js';

/** What the proxy does to one request instead of forwarding it. */
export type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | { reset: true };
export type Fault = Answer | { delayMs: number } | { forwardThen: Answer } | { pass: true };

/**
 * A real HTTP proxy in front of a real server: it answers the next queued faults itself
 * (after reading the request body, as a server would), and forwards everything else.
 * `forwardThen` lets the server do the work, then loses its answer and sends `forwardThen` instead;
 * `pass` forwards one request untouched (to fail a later one).
 */
export class FaultProxy {
  readonly seen: string[] = [];
  private readonly faults: Fault[] = [];
  private server!: http.Server;
  url = '';

  constructor(private readonly target: string) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Queues faults for the next requests, and forgets what was seen so far. */
  next(...faults: Fault[]): this {
    this.faults.length = 0;
    this.faults.push(...faults);
    this.seen.length = 0;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.seen.push(`${req.method} ${req.url}`);
    const fault = this.faults.shift();
    if (!fault || 'pass' in fault) {
      this.forward(req, res);
      return;
    }
    if ('reset' in fault) {
      req.socket.destroy();
      return;
    }
    if ('forwardThen' in fault) {
      const up = http.request(this.target + req.url, { method: req.method, headers: req.headers }, (r) => {
        r.resume();
        r.on('end', () => answer(req, res, fault.forwardThen));
      });
      up.on('error', () => res.destroy());
      req.pipe(up);
      return;
    }
    req.resume();
    req.on('end', () => {
      if ('delayMs' in fault) {
        setTimeout(() => this.forwardBuffered(req, res), fault.delayMs);
        return;
      }
      answer(req, res, fault);
    });
  }

  /** After a delay the body is gone; only bodiless requests are delayed by the tests. */
  private forwardBuffered(req: http.IncomingMessage, res: http.ServerResponse): void {
    const up = http.request(this.target + req.url, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, endToEndHeaders(r.headers));
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    up.end();
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const up = http.request(this.target + req.url, { method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, endToEndHeaders(r.headers));
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  }
}

function answer(req: http.IncomingMessage, res: http.ServerResponse, a: Answer): void {
  if ('reset' in a) {
    req.socket.destroy();
    return;
  }
  res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers });
  res.end(a.body === undefined ? '' : JSON.stringify(a.body));
}
