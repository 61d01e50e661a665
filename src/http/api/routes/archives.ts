import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Core } from '../../../core/index.js';
import type { ArchiveUrl } from '../../../wire/archives.js';
import { callerOf } from '../../auth.js';
import {
  authErrors,
  CreateLinkBody,
  errorResponse,
  ListArtifactsQuery,
  ListLinksQuery,
  SessionIdParams,
  SessionLinkList,
  SessionLinkRecord,
} from '../schemas.js';

const auth = { auth: true } as const;
const security = [{ bearer: [] }];

const FormatParam = Type.Optional(
  Type.String({
    enum: ['zip', 'tar.gz'],
    description: '`zip` (the default; entries stored, with an exact length) or `tar.gz`.',
  }),
);

/** The list's filters (less its paging) and the format; `metadata.<key>` is checked by the core, as for the list. */
const { cursor: _cursor, limit: _limit, ...FILTERS } = ListArtifactsQuery.properties;
const ArchiveQuery = Type.Object(
  { ...FILTERS, format: FormatParam },
  { additionalProperties: true, description: ListArtifactsQuery.description },
);

const ARCHIVE_HOLDS =
  'The archive holds each live artifact under its filename made safe for every OS (no path, no control or ' +
  'bidirectional characters; a name taken already, compared case-insensitively, gets the artifact id before its ' +
  'extension), oldest first, with its `created_at` as its time, and `manifest.json` first: each entry’s `path`, ' +
  '`artifact_id`, `filename`, `content_type`, `size_bytes`, `sha256`, `metadata`, `session_id`, `agent_id`, ' +
  '`created_at` and `expires_at`. Deleted and expired artifacts are left out: it holds what the list shows when ' +
  'the URL is fetched. At most 10,000 artifacts and the plan’s storage in bytes, refused before the first byte.\n\n' +
  'The answer is `303 See Other` to a signed URL on the content origin (valid one hour, no key needed), with the ' +
  'same URL and what it holds in the body: `curl -L` and browsers follow it; SDKs read the body. This call counts ' +
  'as one request; fetching the URL counts none.';

const archiveErrors = {
  ...authErrors,
  400: errorResponse('`invalid_request`: a bad filter or format, or more than 10,000 matching artifacts.'),
  413: errorResponse('`file_too_large`: the matching artifacts add up to more than the plan’s storage.'),
};

const seeOther = (reply: FastifyReply, body: ArchiveUrl) =>
  reply.status(303).header('Location', body.archive_url).header('Cache-Control', 'no-store').send(body);

export function archiveRoutes(instance: FastifyInstance, core: Core): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/sessions/:id/archive',
    {
      config: auth,
      schema: {
        operationId: 'getSessionArchive',
        summary: 'Download a whole session as one zip or tar.gz',
        description: ARCHIVE_HOLDS,
        tags: ['sessions'],
        security,
        params: SessionIdParams,
        querystring: Type.Object({ format: FormatParam }, { additionalProperties: false }),
        response: {
          303: Type.Ref('ArchiveUrl', { description: 'See Other: `Location` is the signed archive URL.' }),
          ...archiveErrors,
          404: errorResponse('`session_not_found`: no artifact names this session in your tenant.'),
        },
      },
    },
    async (request, reply) =>
      seeOther(
        reply,
        await core.archives.sessionArchiveUrl(callerOf(request), request.params.id, request.query as never),
      ),
  );

  app.get(
    '/v1/artifacts/archive',
    {
      config: auth,
      schema: {
        operationId: 'getArtifactsArchive',
        summary: 'Download every artifact a list query matches as one zip or tar.gz',
        description: `Takes the filters of the list (\`GET /v1/artifacts\`, \`metadata.<key>=<value>\` included; not \`cursor\` or \`limit\`) and \`format\`. ${ARCHIVE_HOLDS}`,
        tags: ['artifacts'],
        security,
        querystring: ArchiveQuery,
        response: {
          303: Type.Ref('ArchiveUrl', { description: 'See Other: `Location` is the signed archive URL.' }),
          ...archiveErrors,
        },
      },
    },
    async (request, reply) =>
      seeOther(reply, await core.archives.listArchiveUrl(callerOf(request), request.query as never)),
  );

  app.post(
    '/v1/sessions/:id/links',
    {
      config: auth,
      schema: {
        operationId: 'createSessionLink',
        summary: 'Create a shareable link to a sealed session',
        description:
          'A link anyone can open without a key: `url` is its page on the viewer origin (the session’s files with ' +
          'their sizes and a “download all” button), `archive_url` the archive itself (zip, or `?format=tar.gz`). ' +
          'Only for a sealed session, so that what it serves cannot grow; deleted and expired artifacts drop out of ' +
          'it. Lifetime (default 7 days, at most 30, as `expires_in` seconds or a `ttl` duration), the plan’s cap of ' +
          'active links, listing and revoking (`DELETE /v1/links/{link_id}`) are those of artifact links.',
        tags: ['sessions'],
        security,
        params: SessionIdParams,
        body: Type.Ref(CreateLinkBody),
        response: {
          201: Type.Ref(SessionLinkRecord, { description: 'The new link.' }),
          ...authErrors,
          400: errorResponse('`invalid_request`: the session is not sealed, or a bad lifetime.'),
          404: errorResponse('`session_not_found`: no artifact names this session in your tenant.'),
        },
      },
    },
    async (request, reply) => {
      const link = await core.sharing.createSessionLink(callerOf(request), request.params.id, {
        expiresIn: request.body.expires_in,
        ttl: request.body.ttl,
      });
      return reply.status(201).send(link);
    },
  );

  app.get(
    '/v1/sessions/:id/links',
    {
      config: auth,
      schema: {
        operationId: 'listSessionLinks',
        summary: "List a session's live share links",
        description: 'Unexpired, unrevoked links of the session, newest first, keyset-paginated.',
        tags: ['sessions'],
        security,
        params: SessionIdParams,
        querystring: ListLinksQuery,
        response: {
          200: Type.Ref(SessionLinkList, { description: 'A page of live links.' }),
          ...authErrors,
          404: errorResponse('`session_not_found`: no artifact names this session in your tenant.'),
        },
      },
    },
    async (request) => core.sharing.listSessionLinks(callerOf(request), request.params.id, request.query),
  );
}
