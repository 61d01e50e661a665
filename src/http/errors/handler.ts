import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CairnError, type ErrorCode, isCairnError, toEnvelope } from '../../core/errors.js';
import type { RateDecision } from '../../ports/rate-limiter.js';
import { LARGE_LIMIT_TEXT, SINGLE_LIMIT_TEXT } from '../../shared/upload-limits.js';
import { bodyIdleTimeout, cutStalledBodies, takesBody } from '../body-idle-timeout.js';
import type { ListenerOptions } from '../fastify-options.js';
import { lingerAfterEarlyAnswer } from '../lingering-close.js';
import { installMetricsHooks, type ListenerMetrics } from '../metrics-hooks.js';
import { setRateHeaders } from '../rate-headers.js';
import { installRequestIdHeader } from '../request-id.js';
import { dependencyFailure } from './dependency.js';
import { installShutdownGate } from './protocol.js';

/** A multipart upload's refusal, whoever notices first (our streaming check or busboy's). */
export const FILE_TOO_LARGE = `File is larger than ${SINGLE_LIMIT_TEXT}; larger files go up resumably or presigned (Pro, up to ${LARGE_LIMIT_TEXT}).`;

/** Framework and plugin error codes mapped onto the API's stable codes. */
const FRAMEWORK_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['invalid_request', 'Request body is not valid JSON.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_request', 'Request body is empty; send a JSON object.'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['file_too_large', 'Request body is larger than this endpoint accepts.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Unsupported Content-Type for this endpoint.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['invalid_request', 'Content-Length does not match the body.'],
  FST_INVALID_MULTIPART_CONTENT_TYPE: ['unsupported_media_type', 'Expected multipart/form-data.'],
  FST_REQ_FILE_TOO_LARGE: ['file_too_large', FILE_TOO_LARGE],
  FST_FILES_LIMIT: ['invalid_request', 'Send exactly one file part named "file".'],
  FST_FIELDS_LIMIT: ['invalid_request', 'Too many form fields.'],
  FST_PARTS_LIMIT: ['invalid_request', 'Too many multipart parts.'],
  // @fastify/multipart's refusal of a field named after an Object.prototype member.
  FST_PROTO_VIOLATION: ['invalid_request', 'Form field names such as constructor or __proto__ are not accepted.'],
};

export function toCairnError(err: unknown): CairnError | null {
  if (isCairnError(err)) return err;
  const e = err as FastifyError & {
    validation?: {
      keyword?: string;
      params?: { additionalProperty?: string };
      parentSchema?: { examples?: unknown };
    }[];
  };
  if (e?.validation || e?.code === 'FST_ERR_VALIDATION') {
    const unknown = e.validation?.[0]?.keyword === 'additionalProperties' && e.validation[0].params?.additionalProperty;
    if (unknown !== undefined && unknown !== false && e.validationContext === 'querystring') {
      return new CairnError('invalid_request', `Unknown query parameter '${unknown.slice(0, 80)}'.`);
    }
    if (unknown !== undefined && unknown !== false && e.validationContext === 'body') {
      return new CairnError('invalid_request', `Unknown field '${unknown.slice(0, 80)}'.`);
    }
    const examples = e.validation?.[0]?.parentSchema?.examples;
    const example = Array.isArray(examples) && examples.length > 0 ? `, e.g. ${JSON.stringify(examples[0])}` : '';
    return new CairnError(
      'invalid_request',
      `${e.message.replace(/^(body|querystring|params|headers)\//, '$1.')}${example}`,
    );
  }
  const mapped = e?.code ? FRAMEWORK_CODES[e.code] : undefined;
  if (mapped) return new CairnError(mapped[0], mapped[1]);
  // busboy's own parse errors ("Malformed part header", "Unexpected end of form").
  if (e instanceof Error && /multipart|part header|end of form|boundary/i.test(e.message)) {
    return new CairnError('invalid_request', 'Malformed multipart body.');
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new CairnError('invalid_request', 'Invalid request.');
  }
  return null;
}

/**
 * The client hung up before its request had fully arrived (a cancelled or crashed upload): its
 * connection is gone, and the error the handler saw (ERR_STREAM_PREMATURE_CLOSE, ECONNRESET,
 * "aborted") is its consequence. Not merely a destroyed request stream, which is also what an
 * upload refused mid-body leaves behind (staging stops reading by destroying its source, possibly
 * before Node saw the end of a body that arrived whole); that client is still there to read the
 * refusal.
 */
function clientAborted(request: FastifyRequest): boolean {
  const raw = request.raw;
  return !raw.complete && raw.socket?.destroyed === true;
}

function errorReason(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | null;
  return String(e?.code ?? e?.message ?? err);
}

export interface ErrorHandlingOptions {
  /**
   * Replaces the default answer for an unknown route (the public origins answer it with their own
   * nothing-revealing 404).
   */
  notFound?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply;
  bodyIdleTimeoutSeconds?: ListenerOptions['bodyIdleTimeoutSeconds'];
  /** Counts the listener's requests, refusals and dependency failures. */
  metrics?: ListenerMetrics | undefined;
}

/**
 * Renders every error once, into the `{error:{code,message,status}}` envelope; 5xx never leak
 * internals. Also the first hook of every listener: the 503 answer while it shuts down. And, for
 * every route that takes a body and for an unknown route (whose 404 Fastify answers only after
 * reading the body): the limit on a stalled request body, and the lingering close after an answer
 * that came before the body had all arrived (src/http/lingering-close.ts).
 */
export function installErrorHandling(app: FastifyInstance, opts: ErrorHandlingOptions = {}): void {
  const { notFound } = opts;
  const stalled = bodyIdleTimeout(opts.bodyIdleTimeoutSeconds ?? 0);
  installRequestIdHeader(app);
  if (opts.metrics) installMetricsHooks(app, opts.metrics);
  installShutdownGate(app);
  app.addHook('onRoute', cutStalledBodies(stalled));
  const linger = lingerAfterEarlyAnswer();
  app.addHook('onRoute', (route) => {
    if (!takesBody(route)) return;
    const own = route.onSend;
    route.onSend = own === undefined ? linger : [...(Array.isArray(own) ? own : [own]), linger];
  });
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (clientAborted(request)) {
      // Not a fault of ours and nobody is left to read an answer; the upload path has already
      // dropped whatever was staged. A 4xx keeps it out of any 5xx count.
      request.log.info({ reqId: request.id, reason: errorReason(err) }, 'client aborted');
      return reply
        .status(400)
        .type('application/json; charset=utf-8')
        .send(
          toEnvelope(new CairnError('invalid_request', 'The client closed the connection mid-request.'), request.id),
        );
    }
    const dependency = isCairnError(err) ? null : dependencyFailure(err);
    const known = dependency?.error ?? toCairnError(err);
    const cairn = known ?? new CairnError('server_error', 'Internal server error.');
    if (dependency) {
      request.log.warn(
        { reqId: request.id, dependency: dependency.dependency, reason: errorReason(err) },
        'dependency unavailable',
      );
      opts.metrics?.metrics.dependencyFailed(dependency.dependency);
    } else if (!known || cairn.status === 500) request.log.error({ err, reqId: request.id }, 'request failed');
    // A 503 is a transient condition we chose to report (a busy blob), not a fault.
    else if (cairn.status === 503) request.log.warn({ reqId: request.id, reason: cairn.message }, 'request deferred');
    if (cairn.code === 'rate_limited' || cairn.code === 'quota_exceeded') opts.metrics?.metrics.refused(cairn.code);
    const decision = (err as { decision?: RateDecision }).decision;
    if (decision) setRateHeaders(reply, decision);
    if (cairn.extras.retryAfterSeconds !== undefined)
      reply.header('Retry-After', String(cairn.extras.retryAfterSeconds));
    reply.status(cairn.status).type('application/json; charset=utf-8').send(toEnvelope(cairn, request.id));
  });
  // Fastify gives the 404 route every lifecycle hook passed here; its types list only preValidation
  // and preHandler, hence the cast. test/e2e/body-idle.test.ts and early-answers.test.ts fail if it
  // stops doing so.
  const notFoundHooks = { onSend: linger, ...(stalled ? { preParsing: stalled } : {}) } as Parameters<
    typeof app.setNotFoundHandler
  >[0];
  app.setNotFoundHandler(notFoundHooks, (request, reply) => {
    if (notFound) return notFound(request, reply);
    return reply
      .status(404)
      .type('application/json; charset=utf-8')
      .send(
        toEnvelope(new CairnError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`), request.id),
      );
  });
}
