import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

/**
 * A caller's own id is kept when it is a sane token (what proxies and tracing systems send:
 * UUIDs, hex, `abc-123.x:y`), so one id follows a request through the load balancer, Cairn's log
 * and the error envelope. Anything else (too long, spaces, control characters, several values) is
 * replaced, so a client cannot forge log lines or bloat them.
 */
const SANE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export const REQUEST_ID_HEADER = 'x-request-id';

export function mintRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}

/** Fastify's `genReqId`: the request's own X-Request-Id when sane, else a fresh one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && SANE_ID.test(given) ? given : mintRequestId();
}

/** Every response of the listener carries its request's id. */
export function installRequestIdHeader(app: FastifyInstance): void {
  // A callback hook: it runs on every request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
