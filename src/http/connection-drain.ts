import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How long a connection told to finish (FIN sent) may stay open before it is cut. */
const END_GRACE_MS = 1000;

/**
 * The response a socket is answering, if any. Node's HTTP server sets `_httpMessage` when it
 * assigns a response to the socket (as the request's headers arrive, or when the response before
 * it on a pipelined connection finishes) and clears it once that response has finished. Node's
 * own `Server.closeIdleConnections` reads the same field (Node 20 to 24) to spare busy sockets.
 */
function answering(socket: Socket): boolean {
  return Boolean((socket as Socket & { _httpMessage?: unknown })._httpMessage);
}

/**
 * Closing a listener waits for every open connection, and Node only drops the ones it calls idle
 * (between two complete requests). Three kinds are neither idle nor doing work, and would hold
 * shutdown for a minute or more:
 * - a connection that never sent a byte (until the headers timeout, 60 s);
 * - one whose request was answered before its body was read (an idempotent replay, an early
 *   error) while the client stopped sending the rest: Node waits for the body (request timeout);
 * - a new request whose headers are still arriving (it would only get the shutdown 503).
 * So during shutdown, a connection with no response in progress is told to finish: a silent one
 * is cut at once; any other gets FIN (which, unlike a reset, keeps the response it already has),
 * and is cut if still open a second later.
 *
 * Only connections are followed, not requests: whether a socket is answering is read from Node
 * at shutdown, so the request path carries no hook or listener for this (a hook and a `close`
 * listener per response used to cost a few per cent of a small GET's CPU).
 */
export class ConnectionDrain {
  private readonly open = new Map<Socket, { endedAt: number | null }>();

  /** Follows the connections of one listener. Call before it listens. */
  track(app: FastifyInstance): void {
    app.server.on('connection', (socket: Socket) => {
      this.open.set(socket, { endedAt: null });
      socket.once('close', () => this.open.delete(socket));
    });
  }

  /** One shutdown pass; call it repeatedly while the listeners close. */
  finishUnused(now = Date.now()): void {
    for (const [socket, state] of this.open) {
      if (answering(socket)) continue;
      if (socket.bytesRead === 0) socket.destroy();
      else if (state.endedAt === null) {
        state.endedAt = now;
        socket.end();
      } else if (now - state.endedAt >= END_GRACE_MS) socket.destroy();
    }
  }
}
