import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
import type { RawQuery } from '../../../core/list-query.js';
import { callerOf } from '../../auth.js';
import {
  ArtifactIdParams,
  ArtifactList,
  ArtifactRecord,
  artifactErrors,
  authErrors,
  BatchDownloadUrls,
  BatchDownloadUrlsBody,
  CreateLinkBody,
  DeleteResult,
  DownloadUrl,
  ErrorEnvelope,
  LinkRecord,
  ListArtifactsQuery,
} from '../schemas.js';

const auth = { auth: true } as const;
const security = [{ bearer: [] }];

export function artifactRoutes(app: FastifyInstance, core: Core): void {
  app.get(
    '/v1/artifacts',
    {
      config: auth,
      schema: {
        summary: 'List artifacts',
        description:
          'Newest first (`created_at DESC, artifact_id DESC`), keyset-paginated. Filters combine with AND; ' +
          'up to 8 `metadata.<key>=<value>` (all must match). Unknown parameters are refused.',
        tags: ['artifacts'],
        security,
        querystring: ListArtifactsQuery,
        response: { 200: ArtifactList, ...artifactErrors },
      },
    },
    async (request) => core.artifacts.list(callerOf(request), request.query as RawQuery),
  );

  app.get(
    '/v1/artifacts/:id',
    {
      config: auth,
      schema: {
        summary: 'Get an artifact record (with its page summary)',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        response: { 200: Type.Ref(ArtifactRecord), ...artifactErrors },
      },
    },
    async (request) => core.artifacts.get(callerOf(request), (request.params as { id: string }).id),
  );

  app.delete(
    '/v1/artifacts/:id',
    {
      config: auth,
      schema: {
        summary: 'Soft-delete an artifact',
        description: 'It vanishes at once from lists, downloads, links and pages; bytes are removed 30 days later.',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        response: { 200: DeleteResult, ...artifactErrors },
      },
    },
    async (request) => core.artifacts.softDelete(callerOf(request), (request.params as { id: string }).id),
  );

  app.get(
    '/v1/artifacts/:id/download-url',
    {
      config: auth,
      schema: {
        summary: 'Get a private signed download URL (one hour)',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        response: { 200: DownloadUrl, ...artifactErrors },
      },
    },
    async (request) => core.sharing.downloadUrl(callerOf(request), (request.params as { id: string }).id),
  );

  app.post(
    '/v1/artifacts/batch/download-urls',
    {
      config: auth,
      schema: {
        operationId: 'getDownloadUrls',
        summary: 'Get private signed download URLs for up to 20 artifacts (one hour)',
        description:
          'One item per requested id, in request order: the URL with its filename, content type and size, or ' +
          '`{artifact_id, error}` for an id that is unknown, another tenant’s, deleted or expired. One call counts ' +
          'as one request for the rate limit and the monthly quota. None, more than 20 or a malformed id: 400.',
        tags: ['artifacts'],
        security,
        body: BatchDownloadUrlsBody,
        response: { 200: BatchDownloadUrls, 400: Type.Ref(ErrorEnvelope), ...authErrors },
      },
    },
    async (request) =>
      core.sharing.downloadUrls(callerOf(request), (request.body as { artifact_ids: unknown }).artifact_ids),
  );

  app.post(
    '/v1/artifacts/:id/links',
    {
      config: auth,
      schema: {
        summary: 'Create a shareable download link',
        description: 'Default lifetime 7 days, at most 30 days. Counts against the plan’s active links.',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        body: CreateLinkBody,
        response: { 201: LinkRecord, ...artifactErrors },
      },
    },
    async (request, reply) => {
      const body = request.body as { expires_in?: number };
      const link = await core.sharing.createLink(
        callerOf(request),
        (request.params as { id: string }).id,
        body.expires_in,
      );
      return reply.status(201).send(link);
    },
  );
}
