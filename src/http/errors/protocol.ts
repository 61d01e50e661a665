import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { CairnError, toEnvelope, unavailable } from '../../core/errors.js';

/**
 * The two answers Fastify would otherwise write in its own shape: requests Node cannot parse
 * (answered from the socket, before any route or hook exists) and requests that arrive while the
 * listener drains for shutdown. Both get the `{error:{code,message,status}}` envelope.
 */

/** How long a client should wait before retrying a request refused during shutdown. */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 2;

function protocolError(err: NodeJS.ErrnoException): CairnError {
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return new CairnError('invalid_request', 'The request line and headers are larger than 16 KB.', { status: 431 });
  }
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new CairnError('invalid_request', 'The request was not received in time.', { status: 408 });
  }
  return new CairnError('invalid_request', 'Malformed HTTP request.');
}

/** Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes on this socket. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const error = protocolError(err);
    const body = JSON.stringify(toEnvelope(error));
    socket.write(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/**
 * Once `close()` starts, in-flight requests finish but new ones on open connections (pipelined,
 * or sent on a keep-alive connection that was busy) get a 503 `server_error` with Retry-After and
 * `Connection: close`, so a load balancer or SDK retries them elsewhere. Fastify's own
 * `return503OnClosing` is off because it writes a body of its own shape.
 */
export function installShutdownGate(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook, not an async one: it runs on every request and almost always does nothing.
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    const error = unavailable('The server is shutting down; retry shortly.', SHUTDOWN_RETRY_AFTER_SECONDS);
    reply
      .status(error.status)
      .header('Retry-After', String(SHUTDOWN_RETRY_AFTER_SECONDS))
      .header('Connection', 'close')
      .type('application/json; charset=utf-8')
      .send(toEnvelope(error, request.id));
  });
}
