import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ArchivePlan, sessionScope } from '../../core/archives.js';
import { invalid } from '../../core/errors.js';
import type { Core } from '../../core/index.js';
import type { ServableSession } from '../../core/sharing.js';
import { LOCKED_DOWN_CSP } from '../public-headers.js';
import { contentDisposition } from './serve-bytes.js';

const TYPES = { zip: 'application/zip', 'tar.gz': 'application/gzip' } as const;

/**
 * Streams a planned archive to an anonymous client with the download headers of every byte the
 * content origin sends (attachment, nosniff, a sandboxing CSP, noindex). One of the tenant's
 * archive streams is held until the response ends, however it ends.
 */
export async function sendArchive(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  plan: ArchivePlan,
): Promise<FastifyReply> {
  reply
    .header('Content-Type', TYPES[plan.format])
    .header('Content-Disposition', contentDisposition('attachment', plan.filename))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', LOCKED_DOWN_CSP)
    .header('X-Robots-Tag', 'noindex, nofollow')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cache-Control', 'private, no-store');
  // HEAD (a session link's URL) says what it is without building anything.
  if (request.method === 'HEAD') return reply.status(200).send();
  const release = core.archives.takeStream(plan.tenant.id);
  reply.raw.once('close', release);
  try {
    const { archiveBody } = await import('./archive-stream.js');
    const body = await archiveBody(core.deps.blobs, plan);
    body.stream.on('error', (err) => {
      request.log.warn({ err: String(err) }, 'archive stream failed part-way');
    });
    if (body.length !== null) reply.header('Content-Length', String(body.length));
    return reply.status(200).send(body.stream);
  } catch (err) {
    release();
    throw err;
  }
}

/** `GET {content_origin}/z/<token>/<name>`: the signed archive URLs of the API's archive calls. */
export function archiveRoutes(
  app: FastifyInstance,
  core: Core,
  gone: (request: FastifyRequest, reply: FastifyReply) => unknown,
): void {
  app.get('/z/:token/:name', { exposeHeadRoute: false }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const plan = await core.archives.resolveToken(token);
    if (!plan) return gone(request, reply);
    return sendArchive(core, request, reply, plan);
  });
}

/** A session link's archive: zip, or `?format=tar.gz`. */
export async function sendSessionArchive(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  { link, tenant }: ServableSession,
): Promise<FastifyReply> {
  const { format = 'zip', ...rest } = request.query as Record<string, unknown>;
  if ((format !== 'zip' && format !== 'tar.gz') || Object.keys(rest).length > 0) {
    throw invalid('A session link takes only format=zip (the default) or format=tar.gz.');
  }
  const plan = await core.archives.plan(tenant, format, sessionScope(link.sessionId));
  return sendArchive(core, request, reply, plan);
}
