import { type TSchema, Type } from '@sinclair/typebox';
import { LIMITS } from '../../core/plans.js';
import { LARGE_LIMIT_TEXT, SINGLE_LIMIT_TEXT } from '../../shared/upload-limits.js';
import { authErrors, errorResponse } from './schemas.js';

/**
 * The tus routes as the OpenAPI document shows them. They declare the protocol's headers for a
 * reader and a generated client, but only params are validated from them: tus defines its own
 * answers to bad headers (412, 415, 460), which the route and the core give.
 */

const security = [{ bearer: [] }];
const tags = ['uploads'];
const str = (description: string) => Type.String({ description });
const version = Type.Literal('1.0.0', { description: 'The tus version: `1.0.0`.' });
const IdParams = Type.Object({ id: str('The upload id: the artifact id the finished upload becomes, art_…') });

/** A response with no body, only headers. */
const noBody = (description: string, headers: Record<string, TSchema>) => Type.Null({ description, headers });
const offsetHeader = str('Bytes of the upload the server has.');
const expiresHeader = str('When an unfinished upload is gone (HTTP date, 24 h after its creation).');
const resumable = { 'Tus-Resumable': version };

const piece = {
  content: {
    'application/offset+octet-stream': {
      schema: Type.Unsafe<string>({ type: 'string', format: 'binary', description: 'The next bytes of the file.' }),
    },
  },
};

export const tusSchemas = {
  options: {
    operationId: 'getResumableUploadOptions',
    summary: 'What the tus endpoint supports (no key)',
    description: 'The tus version, extensions, largest size and checksum algorithms. 404 on a server without tus.',
    tags,
    response: {
      204: noBody('The capabilities, in headers.', {
        'Tus-Version': version,
        'Tus-Extension': str('creation,creation-with-upload,termination,expiration,checksum'),
        'Tus-Max-Size': str(
          `The largest Upload-Length (${LIMITS.presignedBytes}, Pro; Free: ${LIMITS.multipartBytes}).`,
        ),
        'Tus-Checksum-Algorithm': str('sha1,sha256'),
      }),
    },
  },
  create: {
    operationId: 'createResumableUpload',
    summary: 'Start a resumable upload (tus creation)',
    description:
      'Refuses a bad field, a sealed session, a size over the plan or the storage quota before any byte. ' +
      'A body sent as application/offset+octet-stream is the first piece (creation-with-upload). ' +
      'See docs/api.md, "Resumable uploads".',
    tags,
    security,
    headers: Type.Object({
      'tus-resumable': version,
      'upload-length': str(
        `The size of the file in bytes (Free up to ${SINGLE_LIMIT_TEXT}; Pro up to ${LARGE_LIMIT_TEXT}).`,
      ),
      'upload-metadata': Type.Optional(
        str(
          'Comma-separated `key base64(value)` pairs: filename (required), content_type, session_id, agent_id, ttl, metadata (JSON), transcript.',
        ),
      ),
      'idempotency-key': Type.Optional(str('The same key within 24 h is the same upload.')),
    }),
    response: {
      ...authErrors,
      201: noBody('Created: PATCH the bytes to Location.', {
        Location: str('The upload URL; its last segment is the artifact id.'),
        'Upload-Expires': expiresHeader,
        'Upload-Offset': str('Bytes taken with the request (when it carried a piece, or replayed an upload).'),
        ...resumable,
      }),
      400: errorResponse('`invalid_request` or `ttl_exceeds_plan_limit`: a missing or invalid header or field.'),
      409: errorResponse('`session_sealed`: the session named is sealed.'),
      412: errorResponse('`invalid_request`: Tus-Resumable is not 1.0.0.'),
      413: errorResponse('`file_too_large`: Upload-Length is over the plan’s limit.'),
    },
  },
  head: {
    operationId: 'getResumableUploadOffset',
    summary: 'Where a resumable upload stands',
    description: 'Its offset and length (offset = length once it is an artifact). No body, also on 404.',
    tags,
    security,
    params: IdParams,
    headers: Type.Object({ 'tus-resumable': version }),
    response: {
      200: noBody('The upload’s offset and length.', {
        'Upload-Offset': offsetHeader,
        'Upload-Length': str('The size the upload will have.'),
        'Upload-Expires': expiresHeader,
        ...resumable,
      }),
      404: noBody('No such upload: unknown, another tenant’s, terminated or expired.', resumable),
    },
  },
  patch: {
    operationId: 'appendToResumableUpload',
    summary: 'Send the next bytes of a resumable upload',
    description:
      'From the server’s offset. Bytes that arrived before a dropped connection are kept. ' +
      'The request that reaches Upload-Length makes the artifact (GET /v1/artifacts/{id}).',
    tags,
    security,
    params: IdParams,
    headers: Type.Object({
      'tus-resumable': version,
      'upload-offset': str('The offset HEAD gave.'),
      'upload-checksum': Type.Optional(str('`sha1 <base64>` or `sha256 <base64>` of this body.')),
    }),
    body: piece,
    response: {
      ...authErrors,
      204: noBody('Taken.', { 'Upload-Offset': offsetHeader, 'Upload-Expires': expiresHeader, ...resumable }),
      400: errorResponse('`invalid_request`: a missing Upload-Offset or a bad Upload-Checksum.'),
      404: errorResponse('`not_found`: no such upload (unknown, another tenant’s, terminated or expired).'),
      409: errorResponse('`upload_offset_conflict`: another offset, or another PATCH in progress; HEAD and retry.'),
      413: errorResponse('`file_too_large`: more bytes than Upload-Length.'),
      415: errorResponse('`unsupported_media_type`: the body is not application/offset+octet-stream.'),
      460: errorResponse('`checksum_mismatch`: the body does not match Upload-Checksum; nothing of it was kept.'),
    },
  },
  terminate: {
    operationId: 'terminateResumableUpload',
    summary: 'Abandon a resumable upload (tus termination)',
    description: 'Its bytes go at once. A finished upload is an artifact: DELETE /v1/artifacts/{id}.',
    tags,
    security,
    params: IdParams,
    headers: Type.Object({ 'tus-resumable': version }),
    response: {
      ...authErrors,
      204: noBody('Gone.', resumable),
      404: errorResponse('`not_found`: no such upload in progress.'),
    },
  },
};
