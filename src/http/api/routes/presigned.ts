import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
import { callerOf } from '../../auth.js';
import { ArtifactIdParams, ArtifactRecord, artifactErrors, ErrorEnvelope } from '../schemas.js';

const security = [{ bearer: [] }];

export const UploadUrlBody = Type.Object(
  {
    filename: Type.String({ minLength: 1 }),
    size_bytes: Type.Integer({
      minimum: 1,
      maximum: 5 * 1024 ** 3,
      description: 'Exact size of the file, at most 5 GiB.',
    }),
    content_type: Type.Optional(Type.String()),
    session_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    agent_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    ttl: Type.Optional(Type.String()),
    transcript: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const UploadTicket = Type.Object({
  artifact_id: Type.String(),
  status: Type.Literal('pending'),
  upload_url: Type.String(),
  upload_expires_at: Type.String({ format: 'date-time' }),
  upload_method: Type.Literal('PUT'),
  upload_headers: Type.Record(Type.String(), Type.String()),
});

/** Presigned uploads for large files: upload-url → PUT → complete. */
export function presignedRoutes(app: FastifyInstance, core: Core): void {
  app.post(
    '/v1/artifacts/upload-url',
    {
      config: { auth: true },
      schema: {
        summary: 'Start a presigned upload (Pro; up to 5 GiB)',
        description:
          'Creates a pending artifact and returns a URL to PUT exactly `size_bytes` to, with `upload_headers`. ' +
          'Then call complete. Free tenants get quota_exceeded.',
        tags: ['artifacts'],
        security,
        body: UploadUrlBody,
        response: { 201: UploadTicket, 409: Type.Ref(ErrorEnvelope), ...artifactErrors },
      },
    },
    async (request, reply) => {
      const b = request.body as typeof UploadUrlBody.static;
      const ticket = await core.presigned.requestUrl(callerOf(request), {
        filename: b.filename,
        sizeBytes: b.size_bytes,
        contentType: b.content_type,
        sessionId: b.session_id,
        agentId: b.agent_id,
        metadata: b.metadata,
        ttl: b.ttl,
        transcript: b.transcript,
      });
      return reply.status(201).send(ticket);
    },
  );

  app.post(
    '/v1/artifacts/:id/complete',
    {
      config: { auth: true },
      schema: {
        summary: 'Finish a presigned upload',
        description:
          'Hashes what arrived, dedups it and makes the artifact visible. Idempotent: again returns the same record. ' +
          'Before the bytes arrive: 409 upload_not_found.',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        response: { 200: Type.Ref(ArtifactRecord), 409: Type.Ref(ErrorEnvelope), ...artifactErrors },
      },
    },
    async (request) => core.presigned.complete(callerOf(request), (request.params as { id: string }).id),
  );

  // Cairn's own signed PUT target, used when the blob store cannot sign URLs (the local folder).
  app.register(async (scope) => {
    // Raw bytes of any type stream straight to staging; nothing is parsed or buffered.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.put(
      '/v1/uploads/:id',
      {
        schema: {
          summary: 'Receive the bytes of a presigned upload (signed URL; no API key)',
          tags: ['artifacts'],
          params: Type.Object({ id: Type.String() }),
          querystring: Type.Object(
            { exp: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({ artifact_id: Type.String(), size_bytes: Type.Integer() }),
            409: Type.Ref(ErrorEnvelope),
            413: Type.Ref(ErrorEnvelope),
            // The tenant's large uploads in flight are all taken (UploadSlots).
            429: Type.Ref(ErrorEnvelope),
          },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        const { exp, sig } = request.query as { exp?: string; sig?: string };
        return core.presigned.receive(id, exp, sig, request.raw);
      },
    );
  });
}
