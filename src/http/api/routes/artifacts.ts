import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
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
  LinkRecord,
  ListArtifactsQuery,
} from '../schemas.js';

const auth = { auth: true } as const;
const security = [{ bearer: [] }];

export function artifactRoutes(instance: FastifyInstance, core: Core): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/artifacts',
    {
      config: auth,
      schema: {
        operationId: 'listArtifacts',
        summary: 'List artifacts',
        description:
          'Newest first (`created_at DESC, artifact_id DESC`), keyset-paginated. Filters combine with AND. ' +
          'Unknown parameters are refused.\n\n' +
          '**Metadata filters** `metadata.<key>=<value>` (up to 8 per query, all must match; `<key>` matches ' +
          '`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`): an exact match on one metadata key, e.g. `metadata.kind=report`. ' +
          'It matches a stored string equal to the value, or a number or boolean whose JSON text is the value ' +
          '(`metadata.attempt=3`, `metadata.final=true`). OpenAPI cannot name such a parameter, so it is not in ' +
          'the parameter list: add it to the query string yourself.',
        tags: ['artifacts'],
        security,
        querystring: ListArtifactsQuery,
        response: {
          200: Type.Ref(ArtifactList, { description: 'A page of artifacts; deleted and expired ones never appear.' }),
          ...authErrors,
        },
      },
    },
    async (request) => core.artifacts.list(callerOf(request), request.query),
  );

  app.get(
    '/v1/artifacts/:id',
    {
      config: auth,
      schema: {
        operationId: 'getArtifact',
        summary: 'Get an artifact record (with its page summary)',
        description: 'The record of a live artifact; `page` is its public page, or null.',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        response: { 200: Type.Ref(ArtifactRecord, { description: 'The artifact record.' }), ...artifactErrors },
      },
    },
    async (request) => core.artifacts.get(callerOf(request), request.params.id),
  );

  app.delete(
    '/v1/artifacts/:id',
    {
      config: auth,
      schema: {
        operationId: 'deleteArtifact',
        summary: 'Soft-delete an artifact',
        description: 'It vanishes at once from lists, downloads, links and pages; bytes are removed 30 days later.',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        response: {
          200: Type.Ref(DeleteResult, { description: 'Deleted. Deleting again is 410 `artifact_already_deleted`.' }),
          ...artifactErrors,
        },
      },
    },
    async (request) => core.artifacts.softDelete(callerOf(request), request.params.id),
  );

  app.get(
    '/v1/artifacts/:id/download-url',
    {
      config: auth,
      schema: {
        operationId: 'getDownloadUrl',
        summary: 'Get a private signed download URL (one hour)',
        description:
          'A URL on the content origin, signed and valid for one hour, that serves the bytes without a key ' +
          '(single ranges, `ETag`, `Content-Disposition: attachment`).',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        response: {
          200: Type.Ref(DownloadUrl, { description: 'The signed URL and what it serves.' }),
          ...artifactErrors,
        },
      },
    },
    async (request) => core.sharing.downloadUrl(callerOf(request), request.params.id),
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
        body: Type.Ref(BatchDownloadUrlsBody),
        response: {
          200: Type.Ref(BatchDownloadUrls, { description: 'One item per requested id, in request order.' }),
          ...authErrors,
        },
      },
    },
    async (request) => core.sharing.downloadUrls(callerOf(request), request.body.artifact_ids),
  );

  app.post(
    '/v1/artifacts/:id/links',
    {
      config: auth,
      schema: {
        operationId: 'createLink',
        summary: 'Create a shareable download link',
        description:
          'Default lifetime 7 days, at most 30 days, given as `expires_in` seconds or as a `ttl` duration ' +
          '(`"3d"`), not both. Counts against the plan’s active links. The body is optional.',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        body: Type.Ref(CreateLinkBody),
        response: { 201: Type.Ref(LinkRecord, { description: 'The new link.' }), ...artifactErrors },
      },
    },
    async (request, reply) => {
      const link = await core.sharing.createLink(callerOf(request), request.params.id, {
        expiresIn: request.body.expires_in,
        ttl: request.body.ttl,
      });
      return reply.status(201).send(link);
    },
  );
}
