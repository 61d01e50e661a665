import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
import { callerOf } from '../../auth.js';
import { authErrors, WhoAmI } from '../schemas.js';

export function metaRoutes(app: FastifyInstance, core: Core): void {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Health check',
        tags: ['meta'],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/v1/whoami',
    {
      config: { auth: true },
      schema: {
        summary: 'Verify the key; tenant, plan, usage and limits',
        tags: ['meta'],
        security: [{ bearer: [] }],
        response: { 200: WhoAmI, ...authErrors },
      },
    },
    async (request) => core.tenants.whoami(callerOf(request)),
  );

  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
