import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ArchivePlan } from '../../core/archives.js';
import type { Core } from '../../core/index.js';
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
  const release = core.archives.takeStream(plan.tenant.id);
  reply.raw.once('close', release);
  try {
    const { archiveBody } = await import('./archive-stream.js');
    const body = await archiveBody(core.deps.blobs, plan);
    body.stream.on('error', (err) => {
      request.log.warn({ err: String(err) }, 'archive stream failed part-way');
    });
    reply
      .header('Content-Type', TYPES[plan.format])
      .header('Content-Disposition', contentDisposition('attachment', plan.filename))
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', LOCKED_DOWN_CSP)
      .header('X-Robots-Tag', 'noindex, nofollow')
      .header('Referrer-Policy', 'no-referrer')
      .header('Cache-Control', 'private, no-store');
    if (body.length !== null) reply.header('Content-Length', String(body.length));
    return reply.status(200).send(body.stream);
  } catch (err) {
    release();
    throw err;
  }
}

/** `GET {content_origin}/z/<token>/<name>`: the signed archive URLs of the API's archive calls. */
export function archiveRoutes(app: FastifyInstance, core: Core, gone: (request: FastifyRequest) => unknown): void {
  app.get('/z/:token/:name', { exposeHeadRoute: false }, async (request, reply) => {
    const { token } = request.params as { token: string };
    const plan = await core.archives.resolveToken(token);
    if (!plan) return reply.status(404).send(gone(request));
    return sendArchive(core, request, reply, plan);
  });
}
