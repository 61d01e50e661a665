import multipart from '@fastify/multipart';
import { CAIRN_VERSION } from 'cairn-store-sdk/internal';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Core } from '../../core/index.js';
import { LIMITS } from '../../core/plans.js';
import { installAdmission } from '../auth.js';
import { installErrorHandling } from '../errors/handler.js';
import { baseOptions, type ListenerOptions } from '../fastify-options.js';
import { refuseInvalidBoundary } from '../multipart-boundary.js';
import { installJsonBodies } from './json-bodies.js';
import { archiveRoutes } from './routes/archives.js';
import { artifactRoutes } from './routes/artifacts.js';
import { eventRoutes } from './routes/events.js';
import { linkRoutes } from './routes/links.js';
import { metaRoutes } from './routes/meta.js';
import { answerUnroutableReport, pageRoutes } from './routes/pages.js';
import { presignedRoutes } from './routes/presigned.js';
import { sessionRoutes } from './routes/sessions.js';
import { tusRoutes } from './routes/tus.js';
import { uploadRoutes } from './routes/upload.js';
import { webhookRoutes } from './routes/webhooks.js';
import { components } from './schemas.js';
import { strictQuerystring } from './strict-query.js';

/** The API origin: `/health`, `/v1/*`, and the OpenAPI document generated from the route schemas. */
export async function buildApiApp(core: Core, opts: ListenerOptions): Promise<FastifyInstance> {
  return buildApp(core, opts, false);
}

/**
 * `documenting`: an app that never listens, built once per process at the first request of
 * `/v1/openapi.json` with fastify-swagger registered, which records every route as it is added;
 * the listening app does without it (fastify-swagger and YAML are a tenth of a start).
 */
async function buildApp(core: Core, opts: ListenerOptions, documenting: boolean): Promise<FastifyInstance> {
  const app = Fastify(baseOptions(opts.logLevel, opts.trustProxy, [answerUnroutableReport]));
  installErrorHandling(app, { bodyIdleTimeoutSeconds: opts.bodyIdleTimeoutSeconds, metrics: opts.metrics });
  if (documenting) await registerSwagger(app, core);
  for (const schema of components) app.addSchema(schema);
  await app.register(multipart, {
    // Our own streaming check stops at 500 MiB; busboy's limit sits above it so it never truncates silently first.
    limits: { fileSize: LIMITS.multipartBytes + 1024 * 1024, files: 1, fields: 16, parts: 20, fieldSize: 64 * 1024 },
    throwFileSizeLimit: true,
  });
  // On every route of this origin (the upload route reads parts; any other refuses the body later).
  app.addHook('preValidation', refuseInvalidBoundary);
  // JSON and multipart are the only bodies the API takes; text/plain would otherwise be parsed too.
  app.removeContentTypeParser('text/plain');
  installJsonBodies(app);
  installAdmission(app, core);
  app.addHook('onRoute', strictQuerystring);
  metaRoutes(app, core, documenting ? null : once(() => openApiDocument(core, opts)));
  uploadRoutes(app, core);
  archiveRoutes(app, core);
  artifactRoutes(app, core);
  linkRoutes(app, core);
  sessionRoutes(app, core);
  eventRoutes(app, core, { heartbeatMs: (opts.eventHeartbeatSeconds ?? 15) * 1000 });
  webhookRoutes(app, core);
  presignedRoutes(app, core);
  tusRoutes(app, core);
  pageRoutes(app, core);
  for (const plugin of opts.plugins ?? []) await plugin(app, core);
  return app;
}

async function registerSwagger(app: FastifyInstance, core: Core): Promise<void> {
  const [{ default: swagger }, { finishDocument }] = await Promise.all([
    import('@fastify/swagger'),
    import('./openapi-document.js'),
  ]);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Cairn API',
        version: CAIRN_VERSION,
        description: 'Artifact store for AI agents. Errors are `{error:{code,message,status}}`; match on `error.code`.',
      },
      servers: [{ url: core.deps.origins.api }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'ak_live_… API key' } } },
    },
    // Components are named by their `$id` (schemas.ts), not numbered: generated clients use the names.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: finishDocument,
  });
}

/** The OpenAPI document of an API app built as `opts` build it: every route, schema and plugin. */
async function openApiDocument(core: Core, opts: ListenerOptions): Promise<unknown> {
  const app = await buildApp(core, { ...opts, metrics: undefined }, true);
  try {
    await app.ready();
    return app.swagger();
  } finally {
    await app.close();
  }
}

/** `make`'s result, made at the first call and shared by every later one (a failure is tried again). */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((err: unknown) => {
      made = undefined;
      throw err;
    });
    return made;
  };
}
