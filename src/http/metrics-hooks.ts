import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CairnMetrics, ListenerName } from '../metrics/registry.js';

/** The routes whose requests carry an artifact's bytes (multipart/JSON upload, presigned PUT). */
const UPLOAD_ROUTES = new Set(['POST /v1/artifacts', 'PUT /v1/uploads/:id']);

export interface ListenerMetrics {
  listener: ListenerName;
  metrics: CairnMetrics;
  /** Shared by the listeners of one server: uploads being received now. */
  uploads: { inFlight: number };
}

/** The route template (never the raw URL: ids would make the label unbounded), or `unmatched`. */
function routeOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

function bodyBytes(request: FastifyRequest, reply: FastifyReply): number {
  if (request.method === 'HEAD') return 0;
  const length = Number(reply.getHeader('content-length'));
  return Number.isFinite(length) && length > 0 ? length : 0;
}

/** Counts every answered request of the listener: route, method, status, time, bytes. */
export function installMetricsHooks(app: FastifyInstance, m: ListenerMetrics): void {
  // Callback hooks: they run on every request.
  app.addHook('onRequest', (request, reply, done) => {
    if (UPLOAD_ROUTES.has(`${request.method} ${routeOf(request)}`)) {
      m.uploads.inFlight++;
      // `close` comes once however the request ends (answered, refused, cut off).
      reply.raw.once('close', () => {
        m.uploads.inFlight--;
      });
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    m.metrics.request(
      m.listener,
      routeOf(request),
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
      bodyBytes(request, reply),
    );
    done();
  });
}
