import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Sends a streamed request body with node:http and returns a fetch Response. fetch (undici) in
 * Node 20 reads a streamed request body as fast as its source yields, so a 300 MB file ends up
 * in memory; node:http waits for the socket to drain, which keeps memory flat.
 *
 * The server may answer before it has read the whole body: an idempotent replay (the answer is
 * known from the key alone) or a refusal. The rest of the body is then never sent: the source stops
 * being read at once, and the connection (which cannot carry another request with a body cut
 * short) is closed once the answer has been read. Sending on would wait for a server that no
 * longer reads, which held a replayed push of a few MB open for over a minute.
 */
export function streamRequest(
  url: URL,
  init: { method: string; headers: Record<string, string>; body: AsyncIterable<Uint8Array>; signal: AbortSignal },
): Promise<Response> {
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = lib.request(url, { method: init.method, headers: init.headers, signal: init.signal });
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
      const headers = new Headers();
      for (const [k, v] of Object.entries(res.headers)) {
        if (Array.isArray(v)) for (const one of v) headers.append(k, one);
        else if (v !== undefined) headers.set(k, v);
      }
      const status = res.statusCode ?? 0;
      const bodyless = status === 204 || status === 304;
      // A response is only done once read to its end; until then its keep-alive socket stays busy,
      // and referenced, so the process would wait for the server to close it (72 s) before exiting.
      if (bodyless) res.resume();
      const body = bodyless ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
      resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers }));
    });
    req.on('error', fail);
    async function* untilAnswered(): AsyncGenerator<Uint8Array> {
      for await (const chunk of init.body) {
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
