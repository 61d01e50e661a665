import Fastify, { type FastifyInstance } from 'fastify';
import type { Core } from '../../core/index.js';
import { installErrorHandling } from '../errors/handler.js';
import { baseOptions, type ListenerOptions } from '../fastify-options.js';
import { faviconRoute } from '../favicon.js';
import { installPublicHeaders } from '../public-headers.js';
import { sendNotFound, viewerPageRoutes } from './pages.js';
import { sessionLinkRoutes } from './session-link.js';

/** The viewer origin: public page shells at `/a/<slug>` (added by the pages feature). */
export async function buildViewerApp(core: Core, opts: ListenerOptions): Promise<FastifyInstance> {
  const app = Fastify(baseOptions(opts.logLevel, opts.trustProxy));
  // Any path that is not a page shell gets the same 404 page as an unknown slug.
  installErrorHandling(app, {
    notFound: (_request, reply) => sendNotFound(core, reply),
    bodyIdleTimeoutSeconds: opts.bodyIdleTimeoutSeconds,
    metrics: opts.metrics,
  });
  installPublicHeaders(app);
  app.get('/health', async () => ({ status: 'ok' }));
  faviconRoute(app);
  viewerPageRoutes(app, core);
  sessionLinkRoutes(app, core);
  for (const plugin of opts.plugins ?? []) await plugin(app, core);
  return app;
}
