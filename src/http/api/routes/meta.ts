import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
import { callerOf } from '../../auth.js';
import { authErrors, Health, WhoAmI } from '../schemas.js';

/** `document`: the OpenAPI document of the API (null in the app that makes it, which needs no route for it). */
export function metaRoutes(instance: FastifyInstance, core: Core, document: (() => Promise<unknown>) | null): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/health',
    {
      schema: {
        operationId: 'getHealth',
        summary: 'Health check',
        description: 'No key. 200 while the server takes requests.',
        tags: ['meta'],
        response: { 200: Type.Ref(Health, { description: 'The server is up.' }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/v1/whoami',
    {
      config: { auth: true },
      schema: {
        operationId: 'getWhoami',
        summary: 'Verify the key; tenant, plan, usage and limits',
        description: 'The tenant the key belongs to, its plan, this month’s usage and the plan’s limits.',
        tags: ['meta'],
        security: [{ bearer: [] }],
        response: { 200: Type.Ref(WhoAmI, { description: 'The tenant, its usage and limits.' }), ...authErrors },
      },
    },
    async (request) => core.tenants.whoami(callerOf(request)),
  );

  if (document) app.get('/v1/openapi.json', { schema: { hide: true } }, document);
}
