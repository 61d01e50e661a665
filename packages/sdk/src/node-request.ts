import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { nodeHttp } from './builtins.js';

/** The part of a fetch `Response` the SDK reads: a real Response fits, and so does `nodeRequest`'s answer. */
export interface Answer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  /** The whole body as UTF-8 text. */
  text(): Promise<string>;
  /** The body as a stream (read it, or cancel it); null when the answer has none. */
  readonly body: ReadableStream<Uint8Array> | null;
}

export interface NodeRequestInit {
  method: string;
  headers: Record<string, string>;
  /** A whole body, or a streamed one (sent as fast as the socket drains, so memory stays flat). */
  body?: string | AsyncIterable<Uint8Array>;
  signal?: AbortSignal;
}

/**
 * One HTTP request with node:http (node:https for https URLs; both loaded on first use, see builtins.ts), answered as an
 * `Answer`. The default transport of the SDK, so a client process never loads fetch's stack;
 * keep-alive sockets come from Node's global agents, which unref them while idle, so a process
 * exits when its work is done as long as every answer is read to its end (or its body
 * cancelled): an answer without a body is read here at once.
 *
 * A streamed body: the server may answer before it has read all of it (an idempotent replay, or
 * a refusal). The rest is then never sent: the source stops being read at once, and the
 * connection (which cannot carry another request after a body cut short) is closed once the
 * answer has been read. Sending on would wait for a server that no longer reads.
 */
export function nodeRequest(url: URL, init: NodeRequestInit): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const req = nodeHttp(url.protocol).request(url, {
      method: init.method,
      headers: init.headers,
      signal: init.signal,
    });
    let settled = false;
    let answered = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    req.on('response', (res) => {
      settled = true;
      answered = true;
      if (!req.writableFinished) {
        const hangUp = () => req.destroy();
        res.once('end', hangUp);
        res.once('close', hangUp);
      }
      resolve(new NodeAnswer(res, init.method === 'HEAD'));
    });
    req.on('error', fail);
    const body = init.body;
    if (body === undefined || typeof body === 'string') {
      req.end(body);
      return;
    }
    async function* untilAnswered(): AsyncGenerator<Uint8Array> {
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        if (answered) return;
        yield chunk;
      }
    }
    pipeline(Readable.from(untilAnswered(), { objectMode: false }), req).catch((err) => {
      // An early answer (e.g. a refusal before the body was read) is still delivered above.
      fail(err);
      req.destroy();
    });
  });
}

class NodeAnswer implements Answer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: HeaderView;
  private readonly bodyless: boolean;
  private stream: ReadableStream<Uint8Array> | null = null;

  constructor(
    private readonly res: IncomingMessage,
    head: boolean,
  ) {
    this.status = res.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = new HeaderView(res.headers);
    this.bodyless = head || this.status === 204 || this.status === 304;
    // Read to its end, so that its keep-alive socket goes back to the pool (where it is unref'd).
    if (this.bodyless) res.resume();
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.bodyless) return null;
    this.stream ??= Readable.toWeb(this.res) as ReadableStream<Uint8Array>;
    return this.stream;
  }

  async text(): Promise<string> {
    if (this.bodyless) return '';
    const chunks: Buffer[] = [];
    for await (const chunk of this.res) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
}

/** `Headers.get` over node's header object: names are lower case there, repeats joined by ", ". */
class HeaderView {
  constructor(private readonly raw: IncomingHttpHeaders) {}

  get(name: string): string | null {
    const v = this.raw[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(', ') : v;
  }
}
