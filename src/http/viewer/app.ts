import Fastify, { type FastifyInstance } from 'fastify';
import type { TrustProxy } from '../../config.js';
import type { Core } from '../../core/index.js';
import { installErrorHandling } from '../errors.js';
import { baseOptions } from '../fastify-options.js';
import { installPublicHeaders } from '../public-headers.js';
import { sendNotFound, viewerPageRoutes } from './pages.js';

export interface ViewerAppOptions {
  logLevel: string;
  trustProxy?: TrustProxy;
  /** Seconds a request's body may pause before its connection is closed (0: never; see bodyIdleTimeout). */
  uploadIdleTimeoutSeconds?: number;
  plugins?: ((app: FastifyInstance, core: Core) => void | Promise<void>)[];
}

/** The viewer origin: public page shells at `/a/<slug>` (added by the pages feature). */
export async function buildViewerApp(core: Core, opts: ViewerAppOptions): Promise<FastifyInstance> {
  const app = Fastify(baseOptions(opts.logLevel, opts.trustProxy));
  // Any path that is not a page shell gets the same 404 page as an unknown slug.
  installErrorHandling(app, {
    notFound: (_request, reply) => sendNotFound(core, reply),
    bodyIdleTimeoutSeconds: opts.uploadIdleTimeoutSeconds,
  });
  installPublicHeaders(app);
  app.get('/health', async () => ({ status: 'ok' }));
  viewerPageRoutes(app, core);
  for (const plugin of opts.plugins ?? []) await plugin(app, core);
  return app;
}
