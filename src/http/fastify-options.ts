import {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { TrustProxy } from '../config.js';
import { CairnError, toEnvelope } from '../core/errors.js';
import type { Core } from '../core/index.js';
import { clientErrorHandler } from './errors/protocol.js';
import { lazySchemaController } from './lazy-compilers.js';
import type { ListenerMetrics } from './metrics-hooks.js';
import { REQUEST_ID_HEADER, requestIdOf } from './request-id.js';

/**
 * Fastify's own `trustProxy: <number>` fails closed (trusts no hop), so a hop count is given as
 * the function proxy-addr calls for each address, from the socket (hop 0) leftwards through
 * X-Forwarded-For: the first `hops` of them are proxies, the next one is the client.
 */
export function fastifyTrustProxy(trust: TrustProxy): FastifyServerOptions['trustProxy'] {
  if (typeof trust === 'number') return trust === 0 ? false : (_address: string, hop: number) => hop < trust;
  return trust;
}

/** Answers a request the router refused before any route ran, or returns false to leave it to the default 400. */
export type RouterErrorAnswer = (request: FastifyRequest, reply: FastifyReply) => boolean;

/** What each of the three listeners is built with (buildApiApp, buildViewerApp, buildContentApp). */
export interface ListenerOptions {
  logLevel: string;
  trustProxy?: TrustProxy;
  /**
   * Seconds a request's body may pause before its connection is closed (0: never; the setting
   * CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS; see bodyIdleTimeout).
   */
  bodyIdleTimeoutSeconds?: number;
  /** Seconds between an event stream's heartbeats (the API listener; default 15). */
  eventHeartbeatSeconds?: number;
  /** Counts the listener's requests for the metrics listener (absent: nothing counted). */
  metrics?: ListenerMetrics | undefined;
  /** Extra route groups added by later features (the API's hosted dashboard, OAuth and MCP). */
  plugins?: ((app: FastifyInstance, core: Core) => void | Promise<void>)[];
}

/** Settings shared by the three listeners. */
export function baseOptions(
  logLevel: string,
  trustProxy: TrustProxy = false,
  routerErrorAnswers: readonly RouterErrorAnswer[] = [],
): FastifyServerOptions {
  return {
    // Logs go to stderr: stdout is for what a command prints (the `cairn serve` banner and key).
    logger: logLevel === 'silent' ? false : { level: logLevel, stream: process.stderr },
    // One line per request would dominate the log and the CPU profile; errors are logged by the handler.
    logController: new LogController({ disableRequestLogging: true }),
    // Behind a load balancer the client IP comes from X-Forwarded-For, read from the right and
    // only through the trusted hops (CAIRN_TRUST_PROXY): a forged leftmost entry changes nothing.
    trustProxy: fastifyTrustProxy(trustProxy),
    // verbose: a refusal can quote the failing field's own `examples` (see src/http/errors/handler.ts).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, verbose: true } },
    // Each route's validators and serializers are compiled at its first request (lazy-compilers.ts).
    schemaController: lazySchemaController,
    // Let in-flight requests finish on shutdown; idle keep-alive sockets are closed at once.
    forceCloseConnections: 'idle',
    // Requests arriving while closing get our own 503 envelope (installShutdownGate), not Fastify's body.
    return503OnClosing: false,
    // Bytes Node cannot parse as HTTP (oversized headers, a broken request line) get the envelope too.
    clientErrorHandler,
    // X-Request-Id is read (and checked) by requestIdOf, never taken raw.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Session ids may be 128 characters; the router's default cap of 100 would refuse valid ones.
    routerOptions: { maxParamLength: 512 },
    // Errors raised by the router before any route runs (bad URL encoding, over-long path segment)
    // get the same envelope as every other error.
    frameworkErrors: (err, request, reply: FastifyReply) => {
      if (routerErrorAnswers.some((answer) => answer(request, reply))) return;
      const message = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path segment is too long.' : 'Malformed URL.';
      reply
        .status(400)
        .header(REQUEST_ID_HEADER, request.id)
        .type('application/json; charset=utf-8')
        .send(toEnvelope(new CairnError('invalid_request', message), request.id));
    },
  };
}
