import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Core } from '../../core/index.js';
import { acceptsHtml } from '../accepts-html.js';
import { installErrorHandling } from '../errors/handler.js';
import { baseOptions, type ListenerOptions } from '../fastify-options.js';
import { faviconRoute } from '../favicon.js';
import { installPublicHeaders, NOTICE_PAGE_CSP } from '../public-headers.js';
import { LINK_GONE_HTML } from '../viewer/templates.js';
import { archiveRoutes, sendSessionArchive } from './archive-route.js';
import { PageDocuments } from './page-documents.js';
import { contentPageRoutes, pageNotFound } from './pages.js';
import { serveArtifactBytes } from './serve-bytes.js';

/**
 * The content origin: the only listener that ever sends stored bytes. It has no API routes and
 * no cookies, so untrusted content served here can reach nothing of value.
 */
export async function buildContentApp(core: Core, opts: ListenerOptions): Promise<FastifyInstance> {
  const app = Fastify(baseOptions(opts.logLevel, opts.trustProxy));
  // A browser opening a dead link gets a page; curl, fetch() and the SDKs get the error envelope.
  const gone = (request: FastifyRequest, reply: FastifyReply) => {
    reply.status(404).header('Vary', 'Accept').header('Cache-Control', 'no-store');
    if (acceptsHtml(request.headers.accept)) {
      return reply
        .header('Content-Type', 'text/html; charset=utf-8')
        .header('Content-Security-Policy', NOTICE_PAGE_CSP)
        .header('Referrer-Policy', 'no-referrer')
        .send(LINK_GONE_HTML);
    }
    return reply.send({
      error: {
        code: 'artifact_not_found',
        message: 'This link is invalid, expired or the file is gone.',
        status: 404,
        request_id: request.id,
      },
    });
  };
  // Unknown paths answer like an unknown page (under /c/) or an unknown link (anywhere else).
  installErrorHandling(app, {
    notFound: (request, reply) =>
      request.url.startsWith('/c/') ? pageNotFound(reply, core.deps.origins.viewer) : gone(request, reply),
    bodyIdleTimeoutSeconds: opts.bodyIdleTimeoutSeconds,
    metrics: opts.metrics,
  });
  installPublicHeaders(app);

  app.get('/health', async () => ({ status: 'ok' }));
  faviconRoute(app);

  // Private signed download URLs from GET /v1/artifacts/{id}/download-url.
  // GET and HEAD explicitly: Fastify's automatic HEAD route would reset Content-Length to 0.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/d/:id',
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const { exp, sig } = request.query as { exp?: string; sig?: string };
      const found = await core.sharing.resolveSigned(id, exp, sig);
      if (!found) return gone(request, reply);
      return serveArtifactBytes(request, reply, core.deps.blobs, found.artifact);
    },
  });

  // Signed archive URLs from GET /v1/sessions/{id}/archive and GET /v1/artifacts/archive.
  archiveRoutes(app, core, gone);

  // Shareable download links: {download_origin}/lnk_<id>.
  // GET and HEAD explicitly: Fastify's automatic HEAD route would reset Content-Length to 0.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/:linkId',
    handler: async (request, reply) => {
      const { linkId } = request.params as { linkId: string };
      const found = await core.sharing.resolveLink(linkId);
      if (found) return serveArtifactBytes(request, reply, core.deps.blobs, found.artifact);
      // A session link serves the session's archive, of what it holds now.
      const session = await core.sharing.resolveSessionLink(linkId);
      if (!session) return gone(request, reply);
      return sendSessionArchive(core, request, reply, session);
    },
  });

  // Text previews and Markdown pages: rendered on worker threads, once per artifact, and kept.
  const documents = new PageDocuments();
  app.addHook('onClose', () => documents.close());
  contentPageRoutes(app, core, documents);
  for (const plugin of opts.plugins ?? []) await plugin(app, core);
  return app;
}
