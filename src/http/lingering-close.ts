import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { onSendHookHandler } from 'fastify';

/** How long and how much a client answered early may go on sending before its connection is closed. */
export interface LingerLimits {
  /** From the answer on, at most this long in all. */
  totalMs: number;
  /** Closed once this long passes with no byte arriving. */
  idleMs: number;
  /** Closed once this many more bytes have arrived (and been thrown away). */
  maxBytes: number;
}

/** nginx's defaults are 30 s and 5 s; a refused body is not worth half a minute of a connection here. */
export const LINGER: LingerLimits = { totalMs: 10_000, idleMs: 2_000, maxBytes: 64 * 1024 * 1024 };

/**
 * The answer to a request that came before its body had all arrived (a refusal at admission, 413
 * for a declared length over the limit, 409 on a sealed session, a tus conflict, an idempotent
 * replay) is followed by a lingering close, as nginx does.
 *
 * Why: Node closes such a connection as soon as the answer is written, with the rest of the body
 * still arriving, and a socket closed with unread bytes is reset (RST). A client that writes its
 * whole body before reading (Python's urllib, many scripts) then fails with a broken pipe, and one
 * that reads while writing (Node's fetch) about half the time: neither sees the envelope. So the
 * answer says `Connection: close`, and once it is written the server sends its FIN and reads and
 * throws away what the client still sends, until the body has all arrived or a limit of LINGER
 * passes (time, silence, bytes), and only then closes. Nothing of those bytes is kept.
 *
 * An `onSend` hook for the routes that take a body (installErrorHandling adds it to each, and to
 * the 404 route), so GETs pay nothing for it.
 */
export function lingerAfterEarlyAnswer(limits: LingerLimits = LINGER): onSendHookHandler {
  return (request, reply, payload, done) => {
    const req = request.raw;
    // A request its reader destroyed (staging that stopped mid-body) has let go of its socket
    // already: Node closes that connection its own way.
    if (!req.complete && !req.destroyed && req.socket && !req.socket.destroyed) {
      reply.header('Connection', 'close');
      lingerOnClose(req, limits);
    }
    done(null, payload);
  };
}

/**
 * From the answer on, the rest of the body is read, counted and thrown away through the request
 * itself, and whatever read it before (a form parser that gave up) lets go of it. Node's parser
 * goes on reading the socket: a 'data' listener on the socket would take the socket from it and
 * lose a resume it has already asked for. Reading starts now, before Node's own end of the
 * response, which would otherwise discard the body in a way that cannot be counted.
 *
 * Node ends a connection whose answer says `Connection: close` with `socket.destroySoon()` once
 * that answer is written; this socket's is the lingering one. (The shutdown drain and a body that
 * stalls mid-way still cut it at once, by other calls.)
 */
function lingerOnClose(req: IncomingMessage, limits: LingerLimits): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  let received = 0;
  let closing: (() => void) | null = null;
  req.unpipe();
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > limits.maxBytes) closing?.();
  });
  req.resume();
  socket.destroySoon = () => {
    closing = linger(req, socket, limits);
    if (received > limits.maxBytes) closing();
  };
}

/** The lingering close itself; returns the function that ends it. */
function linger(req: IncomingMessage, socket: Socket, limits: LingerLimits): () => void {
  // Once all of it is in, nothing is left unread: closing then is a clean close, not a reset.
  if (req.complete) {
    socket.destroy();
    return () => {};
  }
  const close = () => {
    clearTimeout(total);
    socket.setTimeout(0);
    socket.destroy();
  };
  const total = setTimeout(close, limits.totalMs);
  socket.once('close', () => clearTimeout(total));
  socket.setTimeout(limits.idleMs, close);
  req.once('end', close);
  // Our side is done: FIN after the answer, while the client's side may go on sending.
  socket.end();
  return close;
}
