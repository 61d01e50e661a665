import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How long a connection told to finish (FIN sent) may stay open before it is cut. */
const END_GRACE_MS = 1000;

/**
 * Closing a listener waits for every open connection, and Node only drops the ones it calls idle
 * (between two complete requests). Three kinds are neither idle nor doing work, and would hold
 * shutdown for a minute or more:
 * - a connection that never sent a byte (until the headers timeout, 60 s);
 * - one whose request was answered before its body was read (an idempotent replay, an early
 *   error) while the client stopped sending the rest: Node waits for the body (request timeout);
 * - a new request whose headers are still arriving (it would only get the shutdown 503).
 * So during shutdown, a connection with no request being answered is told to finish: a silent one
 * is cut at once; any other gets FIN (which, unlike a reset, keeps the response it already has),
 * and is cut if still open a second later.
 */
export class ConnectionDrain {
  private readonly open = new Map<Socket, { answering: number; endedAt: number | null }>();

  /** Follows the connections and in-flight requests of one listener. Call before it listens. */
  track(app: FastifyInstance): void {
    app.server.on('connection', (socket: Socket) => {
      this.open.set(socket, { answering: 0, endedAt: null });
      socket.once('close', () => this.open.delete(socket));
    });
    // A callback hook, not an async one: it runs on every request and needs no promise.
    app.addHook('onRequest', (request, reply, done) => {
      const state = this.open.get(request.raw.socket);
      if (state) {
        state.answering++;
        // 'close' fires whether the response finished or the connection broke, exactly once.
        reply.raw.once('close', () => state.answering--);
      }
      done();
    });
  }

  /** One shutdown pass; call it repeatedly while the listeners close. */
  finishUnused(now = Date.now()): void {
    for (const [socket, state] of this.open) {
      if (state.answering > 0) continue;
      if (socket.bytesRead === 0) socket.destroy();
      else if (state.endedAt === null) {
        state.endedAt = now;
        socket.end();
      } else if (now - state.endedAt >= END_GRACE_MS) socket.destroy();
    }
  }
}
