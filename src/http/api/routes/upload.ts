import { PassThrough, Readable } from 'node:stream';
import type { MultipartFile, MultipartValue } from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CairnError, invalid } from '../../../core/errors.js';
import type { Core } from '../../../core/index.js';
import { INLINE_LIMIT_TEXT, LIMITS, SINGLE_LIMIT_TEXT } from '../../../core/plans.js';
import type { Caller } from '../../../core/tenants.js';
import { checkIdempotencyKey, type UploadRequest, type UploadResult } from '../../../core/upload.js';
import { isUploadWireField, uploadRequestFrom, type WireUploadFields } from '../../../core/upload-request.js';
import { decodeBase64, parseMetadataField } from '../../../core/validation.js';
import type { StagedBlob } from '../../../ports/blob-store.js';
import { callerOf } from '../../auth.js';
import { FILE_TOO_LARGE } from '../../errors/handler.js';
import { typeboxValidator } from '../../typebox-validator.js';
import {
  ArtifactRecord,
  authErrors,
  errorResponse,
  IdempotencyKeyHeader,
  JsonUploadBody,
  MultipartUploadBody,
} from '../schemas.js';

type JsonUpload = typeof JsonUploadBody.static;

/** Base64 of 10 MiB plus room for the other JSON fields. */
const JSON_BODY_LIMIT = Math.ceil((LIMITS.jsonDecodedBytes * 4) / 3) + 64 * 1024;

export function uploadRoutes(instance: FastifyInstance, core: Core): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/artifacts',
    {
      config: { auth: true },
      bodyLimit: JSON_BODY_LIMIT,
      schema: {
        operationId: 'uploadArtifact',
        summary: 'Upload an artifact',
        description:
          `multipart/form-data (part \`file\`, up to ${SINGLE_LIMIT_TEXT}, streamed) or a JSON body with base64 \`content\` (up to ${INLINE_LIMIT_TEXT} decoded). ` +
          'An `Idempotency-Key` header replays the original response for 24 hours.',
        tags: ['artifacts'],
        security: [{ bearer: [] }],
        headers: IdempotencyKeyHeader,
        body: {
          content: {
            'application/json': { schema: Type.Ref(JsonUploadBody) },
            'multipart/form-data': { schema: Type.Ref(MultipartUploadBody) },
          },
        },
        response: {
          201: Type.Ref(ArtifactRecord, {
            description: 'Stored (or, with `Idempotent-Replayed: true`, the answer to the same Idempotency-Key).',
          }),
          409: errorResponse('`session_sealed`: the session named is sealed.'),
          413: errorResponse(
            `\`file_too_large\`: over ${SINGLE_LIMIT_TEXT} (multipart) or ${INLINE_LIMIT_TEXT} decoded (JSON).`,
          ),
          415: errorResponse('`unsupported_media_type`: neither multipart/form-data nor JSON.'),
          ...authErrors,
          400: errorResponse(
            '`invalid_request` (a missing or invalid field, malformed JSON or base64) or `ttl_exceeds_plan_limit`.',
          ),
        },
      },
      // The body schemas above document both forms; multipart is streamed and checked field by
      // field below, and the JSON form is checked by `checkJsonUpload`: only the query is validated here.
      validatorCompiler: typeboxValidator({ only: ['querystring'] }),
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const idempotencyKey = checkIdempotencyKey(headerValue(request.headers['idempotency-key']));
      const replayed = await core.uploads.replay(caller, idempotencyKey);
      if (replayed) return sendUpload(reply, replayed);
      const result = request.isMultipart()
        ? await multipartUpload(core, caller, request, idempotencyKey)
        : await jsonUpload(core, caller, request.body, idempotencyKey);
      return sendUpload(reply, result);
    },
  );
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function sendUpload(reply: FastifyReply, result: UploadResult) {
  if (result.replayed) reply.header('Idempotent-Replayed', 'true');
  return reply
    .status(result.status)
    .type('application/json; charset=utf-8')
    .serializer((p: unknown) => p as string)
    .send(result.body);
}

const jsonUploadCheck = TypeCompiler.Compile(JsonUploadBody);

function checkJsonUpload(body: unknown): JsonUpload {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('Send a JSON object with filename and base64 content.');
  }
  const first = jsonUploadCheck.Errors(body).First();
  if (first) throw invalid(`body${first.path.replaceAll('/', '.')}: ${first.message}`);
  return body as JsonUpload;
}

async function jsonUpload(core: Core, caller: Caller, raw: unknown, idempotencyKey: string | undefined) {
  const body = checkJsonUpload(raw);
  const bytes = decodeBase64(body.content);
  if (bytes.length > LIMITS.jsonDecodedBytes) {
    throw new CairnError(
      'file_too_large',
      `JSON uploads are limited to ${INLINE_LIMIT_TEXT} decoded; use multipart for larger files (up to ${SINGLE_LIMIT_TEXT})`,
    );
  }
  const req = uploadRequestFrom(body);
  await core.uploads.precheck(caller, req);
  const staged = await core.uploads.stage(Readable.from([bytes]), LIMITS.jsonDecodedBytes);
  return core.uploads.finish(caller, req, staged, idempotencyKey);
}

/**
 * Reads parts in order. Fields before the file are checked before its bytes are read; the file
 * is streamed to staging; fields after it are checked at the end. Whatever fails, the staged
 * bytes are dropped.
 */
async function multipartUpload(
  core: Core,
  caller: Caller,
  request: FastifyRequest,
  idempotencyKey: string | undefined,
) {
  const fields: WireUploadFields = {};
  let partFilename: string | undefined;
  let partType: string | undefined;
  let staged: StagedBlob | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file' || staged) throw invalid('Send exactly one file part, named "file".');
        const file = attachNow(part.file);
        await core.uploads.precheck(caller, uploadRequestFrom(fields));
        partFilename = part.filename;
        partType = part.mimetype;
        staged = await core.uploads.stage(file, LIMITS.multipartBytes);
        if ((part as MultipartFile).file.truncated) throw new CairnError('file_too_large', FILE_TOO_LARGE);
      } else {
        applyField(fields, part as MultipartValue);
      }
    }
    if (!staged) throw invalid('Multipart upload needs a file part named "file".');
    const req: UploadRequest = { ...uploadRequestFrom({ filename: partFilename, ...fields }), partType };
    const done = staged;
    staged = undefined;
    return await core.uploads.finish(caller, req, done, idempotencyKey);
  } finally {
    if (staged) await core.deps.blobs.discard(staged);
  }
}

/**
 * The file part as a stream that fails, rather than hangs, when the body ends inside the part.
 * On a broken body @fastify/multipart destroys the part's stream without an error (or busboy
 * only emits 'error' on it); a pipeline attached after that waits forever. Precheck awaits the
 * store before staging starts, and when the body arrived whole before parsing began (auth and
 * rate limits await PostgreSQL and Redis first) all of this has happened before the route even
 * sees the part. So: check now, listen from now on, and hand staging a PassThrough that carries
 * the failure. Backpressure still holds: `pipe` pauses the part once the PassThrough is full.
 */
function attachNow(file: Readable): Readable {
  const out = new PassThrough();
  const truncated = () => invalid('Malformed multipart body: it ended inside the file part.');
  // The error stays on `out` (readable.errored) for staging to find; until staging listens,
  // nobody else may, and an 'error' event without a listener would crash the process.
  out.on('error', () => {});
  const cutShort = () => {
    if (!file.readableEnded) out.destroy(truncated());
  };
  if (file.destroyed) {
    // Its bytes can no longer be read, whatever they were.
    out.destroy(truncated());
    return out;
  }
  file.on('error', () => out.destroy(truncated()));
  file.on('close', cutShort);
  // A failed upload destroys `out`; stop the part too, so busboy is not left paused on it.
  out.on('close', () => {
    if (!out.readableEnded) file.destroy();
  });
  file.pipe(out);
  return out;
}

function applyField(fields: WireUploadFields, part: MultipartValue): void {
  if (part.valueTruncated) throw invalid(`Form field ${part.fieldname} is too long.`);
  const value = typeof part.value === 'string' ? part.value : String(part.value);
  const name = part.fieldname;
  // A form carries text: metadata is a JSON object written as text (a later one replaces it).
  if (name === 'metadata') {
    fields.metadata = parseMetadataField(value);
    return;
  }
  if (!isUploadWireField(name)) throw invalid(`Unknown form field '${name.slice(0, 64)}'.`);
  if (fields[name] !== undefined) throw invalid(`Form field ${name} was given twice.`);
  fields[name] = value;
}
