import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
import { callerOf } from '../../auth.js';
import { authErrors, errorResponse, ListSessionsQuery, SealResult, SessionIdParams, SessionList } from '../schemas.js';

const security = [{ bearer: [] }];

export function sessionRoutes(instance: FastifyInstance, core: Core): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/sessions',
    {
      config: { auth: true },
      schema: {
        operationId: 'listSessions',
        summary: 'List sessions',
        description: 'Most recently active first (`last_artifact_at DESC, session_id DESC`), keyset-paginated.',
        tags: ['sessions'],
        security,
        querystring: ListSessionsQuery,
        response: {
          200: Type.Ref(SessionList, { description: 'A page of sessions.' }),
          ...authErrors,
        },
      },
    },
    async (request) => core.sessions.list(callerOf(request), request.query),
  );

  app.post(
    '/v1/sessions/:id/seal',
    {
      config: { auth: true },
      schema: {
        operationId: 'sealSession',
        summary: 'Seal a session (irreversible)',
        description: 'Later uploads naming it get 409 session_sealed. Sealing again returns the original sealed_at.',
        tags: ['sessions'],
        security,
        params: SessionIdParams,
        response: {
          200: Type.Ref(SealResult, { description: 'Sealed (now or before).' }),
          404: errorResponse('`session_not_found`: no artifact names this session.'),
          ...authErrors,
        },
      },
    },
    async (request) => core.sessions.seal(callerOf(request), request.params.id),
  );
}
