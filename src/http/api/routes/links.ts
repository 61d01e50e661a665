import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
import { callerOf } from '../../auth.js';
import {
  ArtifactIdParams,
  artifactErrors,
  authErrors,
  errorResponse,
  LinkIdParams,
  LinkList,
  ListLinksQuery,
  RevokeLinkResult,
} from '../schemas.js';

const auth = { auth: true } as const;
const security = [{ bearer: [] }];

/** Listing an artifact's share links and revoking one (creating one is with the artifact routes). */
export function linkRoutes(instance: FastifyInstance, core: Core): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/artifacts/:id/links',
    {
      config: auth,
      schema: {
        operationId: 'listLinks',
        summary: "List an artifact's live share links",
        description:
          'Unexpired links of the artifact, newest first (`created_at DESC, link_id DESC`), keyset-paginated. ' +
          'Revoked links are gone from the list.',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        querystring: ListLinksQuery,
        response: { 200: Type.Ref(LinkList, { description: 'A page of live links.' }), ...artifactErrors },
      },
    },
    async (request) => core.sharing.listLinks(callerOf(request), request.params.id, request.query),
  );

  app.delete(
    '/v1/links/:link_id',
    {
      config: auth,
      schema: {
        operationId: 'revokeLink',
        summary: 'Revoke a share link',
        description:
          'The link’s URL answers 404 from the next request on, on every instance, and the link no longer ' +
          'counts against the plan’s active links. Idempotent for its owner: revoking a link of yours again, ' +
          'within a day, answers the same 200. An id that is none of your links (unknown, another tenant’s, ' +
          'expired and removed, or gone with its artifact) is 404 `artifact_not_found`.',
        tags: ['artifacts'],
        security,
        params: LinkIdParams,
        response: {
          200: Type.Ref(RevokeLinkResult, { description: 'Revoked (or revoked already).' }),
          ...authErrors,
          404: errorResponse('`artifact_not_found`: no such link in your tenant.'),
        },
      },
    },
    async (request) => core.sharing.revokeLink(callerOf(request), request.params.link_id),
  );
}
