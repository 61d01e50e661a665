import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
import { checkIdempotencyKey } from '../../../core/upload.js';
import { uploadRequestFrom } from '../../../core/upload-request.js';
import { callerOf } from '../../auth.js';
import { typeboxValidator } from '../../typebox-validator.js';
import {
  ArtifactIdParams,
  ArtifactRecord,
  artifactErrors,
  authErrors,
  errorResponse,
  IdempotencyKeyHeader,
  UploadReceipt,
  UploadTicket,
  UploadUrlBody,
} from '../schemas.js';

const security = [{ bearer: [] }];

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Presigned uploads for large files: upload-url → PUT → complete. */
export function presignedRoutes(instance: FastifyInstance, core: Core): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/artifacts/upload-url',
    {
      config: { auth: true },
      schema: {
        operationId: 'requestUploadUrl',
        summary: 'Start a presigned upload (Pro; up to 5 GiB)',
        description:
          'Creates a pending artifact and returns a URL to PUT exactly `size_bytes` to, with `upload_headers`. ' +
          'Then call complete. Free tenants get quota_exceeded. The pending artifact is held 24 hours; its GET ' +
          'shows `status: "pending"` and `held_until`. An `Idempotency-Key` header makes a repeat within 24 hours ' +
          'answer the same pending artifact, with a fresh URL, instead of reserving another.',
        tags: ['artifacts'],
        security,
        headers: IdempotencyKeyHeader,
        body: Type.Ref(UploadUrlBody),
        response: {
          201: Type.Ref(UploadTicket, {
            description:
              'A pending artifact and where to PUT its bytes (or, with `Idempotent-Replayed: true`, the one the same Idempotency-Key reserved).',
          }),
          409: errorResponse(
            '`session_sealed`: the session named is sealed; `upload_not_found`: the Idempotency-Key reserved an upload that is no longer pending.',
          ),
          ...authErrors,
          400: errorResponse('`invalid_request` or `ttl_exceeds_plan_limit`: a missing or invalid field.'),
        },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const key = checkIdempotencyKey(headerValue(request.headers['idempotency-key']));
      const { ticket, replayed } = await core.presigned.reserve(
        callerOf(request),
        { ...uploadRequestFrom(b), sizeBytes: b.size_bytes },
        key,
      );
      if (replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.status(201).send(ticket);
    },
  );

  app.post(
    '/v1/artifacts/:id/complete',
    {
      config: { auth: true },
      schema: {
        operationId: 'completeUpload',
        summary: 'Finish a presigned upload',
        description:
          'Hashes what arrived, dedups it and makes the artifact visible. Idempotent: again returns the same record. ' +
          'Before the bytes arrive: 409 upload_not_found.',
        tags: ['artifacts'],
        security,
        params: ArtifactIdParams,
        response: {
          200: Type.Ref(ArtifactRecord, { description: 'The artifact, now visible (the same record when repeated).' }),
          409: errorResponse('`upload_not_found`: the bytes have not arrived (yet).'),
          ...artifactErrors,
        },
      },
    },
    async (request) => core.presigned.complete(callerOf(request), request.params.id),
  );

  // Cairn's own signed PUT target, used when the blob store cannot sign URLs (the local folder).
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    // Raw bytes of any type stream straight to staging; nothing is parsed or buffered.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.put(
      '/v1/uploads/:id',
      {
        schema: {
          operationId: 'putUpload',
          summary: 'Receive the bytes of a presigned upload (signed URL; no API key)',
          description:
            'The `upload_url` of a ticket when the blob store cannot sign URLs itself (the local folder). Send ' +
            'exactly `size_bytes` bytes with the ticket’s `upload_headers`; then call completeUpload.',
          tags: ['artifacts'],
          params: Type.Object({ id: Type.String({ description: 'The pending artifact id, art_…' }) }),
          querystring: Type.Object(
            {
              exp: Type.Optional(Type.String({ description: 'Expiry of the signature (from upload_url).' })),
              sig: Type.Optional(Type.String({ description: 'The signature (from upload_url).' })),
            },
            { additionalProperties: false },
          ),
          body: {
            content: {
              'application/octet-stream': {
                schema: Type.Unsafe<string>({
                  type: 'string',
                  format: 'binary',
                  description: 'Exactly `size_bytes` bytes, of any content type.',
                }),
              },
            },
          },
          response: {
            200: Type.Ref(UploadReceipt, { description: 'The bytes are staged; call completeUpload next.' }),
            400: errorResponse('`invalid_request`: fewer bytes arrived than the ticket’s `size_bytes`.'),
            409: errorResponse(
              '`upload_not_found`: the URL is invalid or expired, or the upload is completed or removed.',
            ),
            413: errorResponse('`file_too_large`: more bytes than the ticket’s `size_bytes`.'),
            // The tenant's large uploads in flight are all taken (UploadSlots).
            429: errorResponse('`rate_limited`: too many large uploads of this tenant are in flight.'),
          },
        },
        // The body is documented above and streamed by the handler, never parsed or validated here.
        validatorCompiler: typeboxValidator({ only: ['params', 'querystring'] }),
      },
      async (request) => {
        return core.presigned.receive(request.params.id, request.query.exp, request.query.sig, request.raw);
      },
    );
  });
}
