import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CairnError } from '../../../core/errors.js';
import type { Core } from '../../../core/index.js';
import { LIMITS } from '../../../core/plans.js';
import type { ResumableState } from '../../../core/resumable.js';
import { CHECKSUM_ALGORITHMS, parseChecksum } from '../../../core/resumable-checks.js';
import { checkIdempotencyKey } from '../../../core/upload.js';
import { callerOf } from '../../auth.js';
import { typeboxValidator } from '../../typebox-validator.js';
import { byteCount, headerValue, parseUploadMetadata, TUS_VERSION } from '../tus-headers.js';
import { tusSchemas } from '../tus-schemas.js';

const PATH = '/v1/uploads/tus';
const PIECE_TYPE = 'application/offset+octet-stream';
const EXTENSIONS = 'creation,creation-with-upload,termination,expiration,checksum';
/** Headers are documented, not validated from the schema: tus answers bad ones its own way. */
const validatorCompiler = typeboxValidator({ only: ['params', 'querystring'] });

/**
 * The tus 1.0.0 endpoint (resumable uploads): OPTIONS, POST (creation, creation-with-upload),
 * HEAD, PATCH (checksum) and DELETE (termination). Auth, rate limits, the monthly count and
 * upload slots are the API's own admission; errors are Cairn's envelope (HEAD sends none).
 */
export function tusRoutes(app: FastifyInstance, core: Core): void {
  app.register(async (scope) => {
    // Bodies are pieces of a file, streamed to the blob store by the core: never parsed here.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.addHook('onSend', async (_request, reply, payload) => {
      reply.header('Tus-Resumable', TUS_VERSION);
      return payload;
    });
    scope.addHook('preHandler', async (request, reply) => {
      if (request.method === 'OPTIONS' || headerValue(request.headers, 'tus-resumable') === TUS_VERSION) return;
      reply.header('Tus-Version', TUS_VERSION);
      throw new CairnError(
        'invalid_request',
        `This endpoint speaks tus ${TUS_VERSION}: send "Tus-Resumable: ${TUS_VERSION}".`,
        {
          status: 412,
        },
      );
    });

    scope.options(PATH, { schema: tusSchemas.options, validatorCompiler }, async (_request, reply) =>
      reply
        .code(204)
        .header('Tus-Version', TUS_VERSION)
        .header('Tus-Extension', EXTENSIONS)
        .header('Tus-Max-Size', String(LIMITS.presignedBytes))
        .header('Tus-Checksum-Algorithm', CHECKSUM_ALGORITHMS.join(','))
        .send(),
    );

    scope.post(
      PATH,
      { config: { auth: true }, schema: tusSchemas.create, validatorCompiler },
      async (request, reply) => {
        const caller = callerOf(request);
        const { created, checksum } = await beforeBody(request, async () => {
          if (headerValue(request.headers, 'upload-defer-length') !== undefined) {
            throw new CairnError('invalid_request', 'Upload-Defer-Length is not supported: send Upload-Length.');
          }
          const fields = parseUploadMetadata(headerValue(request.headers, 'upload-metadata'));
          const lengthBytes = byteCount(request.headers, 'Upload-Length');
          const key = checkIdempotencyKey(headerValue(request.headers, 'idempotency-key'));
          // Before the upload exists: a bad header must not leave an upload (and its key) behind.
          const checksum = checksumOf(request);
          return { created: await core.resumable.create(caller, { ...fields, lengthBytes }, key), checksum };
        });
        let { state } = created;
        reply.header('Location', `${core.deps.origins.api}${PATH}/${state.id}`);
        // creation-with-upload: the body is the first piece. A replayed creation keeps the upload
        // as it is (its offset may be past 0 already) and tells where it stands.
        const withBody = hasPiece(request);
        if (withBody && !created.replayed && state.expiresAt !== null) {
          state = await core.resumable.append(caller, state.id, 0, request.raw, checksum, declaredLength(request));
        } else {
          request.raw.resume();
        }
        if (created.replayed) reply.header('Idempotent-Replayed', 'true');
        sendState(reply, state, withBody || created.replayed);
        return reply.code(201).send();
      },
    );

    scope.head(
      `${PATH}/:id`,
      // An operation of its own in the OpenAPI document (fastify-swagger leaves HEAD routes out).
      { config: { auth: true, swagger: { exposeHeadRoute: true } }, schema: tusSchemas.head, validatorCompiler },
      async (request, reply) => {
        const state = await core.resumable.state(callerOf(request), idOf(request));
        if (!state) return reply.code(404).header('Cache-Control', 'no-store').send();
        sendState(reply, state, true);
        return reply
          .code(200)
          .header('Upload-Length', String(state.lengthBytes))
          .header('Cache-Control', 'no-store')
          .send();
      },
    );

    scope.patch(
      `${PATH}/:id`,
      { config: { auth: true }, schema: tusSchemas.patch, validatorCompiler },
      async (request, reply) => {
        if (!hasPiece(request)) {
          request.raw.resume();
          throw new CairnError('unsupported_media_type', `A PATCH carries its bytes as Content-Type: ${PIECE_TYPE}.`);
        }
        const { offset, checksum } = await beforeBody(request, async () => {
          const offset = byteCount(request.headers, 'Upload-Offset');
          if (offset === undefined)
            throw new CairnError('invalid_request', 'A PATCH needs Upload-Offset: the offset HEAD gave.');
          return { offset, checksum: checksumOf(request) };
        });
        const state = await core.resumable.append(
          callerOf(request),
          idOf(request),
          offset,
          request.raw,
          checksum,
          declaredLength(request),
        );
        sendState(reply, state, true);
        return reply.code(204).send();
      },
    );

    scope.delete(
      `${PATH}/:id`,
      { config: { auth: true }, schema: tusSchemas.terminate, validatorCompiler },
      async (request, reply) => {
        request.raw.resume();
        await core.resumable.terminate(callerOf(request), idOf(request));
        return reply.code(204).send();
      },
    );
  });
}

/** Runs `work`, which reads no body; if it refuses the request, the body is drained unread. */
async function beforeBody<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    request.raw.resume();
    throw err;
  }
}

const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

function hasPiece(request: FastifyRequest): boolean {
  const type = headerValue(request.headers, 'content-type');
  return type !== undefined && type.split(';')[0]!.trim().toLowerCase() === PIECE_TYPE;
}

/** The body's announced length; undefined when it is chunked (or the header is not a number). */
function declaredLength(request: FastifyRequest): number | undefined {
  const v = headerValue(request.headers, 'content-length');
  return v !== undefined && /^\d{1,16}$/.test(v) ? Number(v) : undefined;
}

function checksumOf(request: FastifyRequest) {
  return parseChecksum(headerValue(request.headers, 'upload-checksum'));
}

function sendState(reply: FastifyReply, state: ResumableState, withOffset: boolean): void {
  if (withOffset) reply.header('Upload-Offset', String(state.offsetBytes));
  if (state.expiresAt !== null) reply.header('Upload-Expires', new Date(state.expiresAt).toUTCString());
}
