import { type Static, Type } from '@sinclair/typebox';
import { INLINE_LIMIT_TEXT, LARGE_LIMIT_TEXT, LARGE_UPLOAD_BYTES, SINGLE_LIMIT_TEXT } from '../shared/upload-limits.js';
import { Nullable, NullableOut, OneOfStrings, Pagination, Timestamp } from './common.js';

/** An artifact's public page, as its record shows it (null: not published). */
export const PageSummary = NullableOut(
  Type.Object({
    public_url: Type.String(),
    visibility: OneOfStrings(['unlisted', 'public']),
  }),
);
export type PageSummary = Static<typeof PageSummary>;

/** The artifact record. Never carries tenant ids, storage keys or `deleted_at`. */
export const ArtifactRecord = Type.Object(
  {
    artifact_id: Type.String({ pattern: '^art_[A-Za-z0-9]{16}$' }),
    filename: Type.String(),
    content_type: Type.String(),
    size_bytes: Type.Integer(),
    content_hash: Type.String({ description: 'Hex SHA-256 of the bytes.' }),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    session_id: NullableOut(Type.String()),
    agent_id: NullableOut(Type.String()),
    created_at: Timestamp,
    expires_at: NullableOut(Timestamp),
    page: PageSummary,
    status: Type.Optional(
      Type.Literal('pending', {
        description:
          'Only on a pending artifact (a presigned or resumable upload not completed yet, shown to its owner only): absent once it is stored.',
      }),
    ),
    held_until: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Only with status "pending": when the reservation is released if the upload is not completed.',
      }),
    ),
  },
  { $id: 'Artifact' },
);
export type ArtifactRecord = Static<typeof ArtifactRecord>;

/** A page of artifacts (the lists are `allOf` Pagination and their items). */
export const ArtifactList = Type.Intersect(
  [Type.Ref(Pagination), Type.Object({ artifacts: Type.Array(Type.Ref(ArtifactRecord)) })],
  { $id: 'ArtifactList' },
);
export type ArtifactList = Static<typeof ArtifactList>;

export const DeleteResult = Type.Object(
  {
    artifact_id: Type.String(),
    deleted: Type.Literal(true),
    deleted_at: Timestamp,
  },
  { $id: 'DeleteResult' },
);
export type DeleteResult = Static<typeof DeleteResult>;

export const JsonUploadBody = Type.Object(
  {
    filename: Type.String({ minLength: 1 }),
    content: Type.String({ description: `The bytes, base64 (at most ${INLINE_LIMIT_TEXT} decoded).` }),
    content_encoding: Type.Optional(Type.Literal('base64')),
    content_type: Type.Optional(Type.String()),
    session_id: Type.Optional(Nullable(Type.String())),
    agent_id: Type.Optional(Nullable(Type.String())),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    ttl: Type.Optional(Type.String({ examples: ['7d', '12h', 'never'] })),
    transcript: Type.Optional(Type.Boolean()),
  },
  { $id: 'JsonUpload', additionalProperties: false },
);
export type JsonUploadBody = Static<typeof JsonUploadBody>;

export const MultipartUploadBody = Type.Object(
  {
    file: Type.String({ format: 'binary', description: `The bytes (at most ${SINGLE_LIMIT_TEXT}), with a filename.` }),
    filename: Type.Optional(Type.String()),
    content_type: Type.Optional(Type.String()),
    session_id: Type.Optional(Type.String()),
    agent_id: Type.Optional(Type.String()),
    ttl: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.String({ description: 'A JSON object, as a string.' })),
    transcript: Type.Optional(Type.String({ enum: ['true', 'false'] })),
  },
  { $id: 'MultipartUpload' },
);

export const UploadUrlBody = Type.Object(
  {
    filename: Type.String({ minLength: 1 }),
    size_bytes: Type.Integer({
      minimum: 1,
      maximum: LARGE_UPLOAD_BYTES,
      description: `Exact size of the file in bytes, at most ${LARGE_LIMIT_TEXT}.`,
    }),
    content_type: Type.Optional(Type.String()),
    session_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    agent_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    ttl: Type.Optional(Type.String()),
    transcript: Type.Optional(Type.Boolean()),
  },
  { $id: 'UploadUrlRequest', additionalProperties: false },
);
export type UploadUrlBody = Static<typeof UploadUrlBody>;

export const UploadTicket = Type.Object(
  {
    artifact_id: Type.String(),
    status: Type.Literal('pending'),
    upload_url: Type.String(),
    upload_expires_at: Type.String({ format: 'date-time' }),
    upload_method: Type.Literal('PUT'),
    upload_headers: Type.Record(Type.String(), Type.String()),
  },
  { $id: 'UploadTicket' },
);
export type UploadTicket = Static<typeof UploadTicket>;

export const UploadReceipt = Type.Object(
  { artifact_id: Type.String(), size_bytes: Type.Integer() },
  { $id: 'UploadReceipt' },
);
export type UploadReceipt = Static<typeof UploadReceipt>;
