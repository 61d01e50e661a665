import { type Static, Type } from '@sinclair/typebox';
import { LINK_ID } from '../shared/id-shapes.js';
import { Pagination, Timestamp } from './common.js';

/** A link's id, of either kind (src/shared/id-shapes.ts). */
const LinkId = Type.String({ pattern: LINK_ID.source });

/** A private signed download URL (one hour) and what it serves. */
export const DownloadUrl = Type.Object(
  {
    download_url: Type.String(),
    expires_in: Type.Integer({ description: 'Seconds the URL stays valid.' }),
    filename: Type.String(),
    content_type: Type.String(),
    size_bytes: Type.Integer(),
  },
  { $id: 'DownloadUrl' },
);
export type DownloadUrl = Static<typeof DownloadUrl>;

export const BatchDownloadUrlsBody = Type.Object(
  {
    artifact_ids: Type.Array(Type.String({ pattern: '^art_[A-Za-z0-9]{16}$' }), {
      minItems: 1,
      maxItems: 20,
      description: '1 to 20 artifact ids; a repeated id is answered twice.',
    }),
  },
  { $id: 'BatchDownloadUrlsRequest', additionalProperties: false },
);
export type BatchDownloadUrlsBody = Static<typeof BatchDownloadUrlsBody>;

export const BatchDownloadUrls = Type.Object(
  {
    download_urls: Type.Array(
      Type.Union([
        Type.Object({
          artifact_id: Type.String(),
          download_url: Type.String(),
          expires_in: Type.Integer(),
          filename: Type.String(),
          content_type: Type.String(),
          size_bytes: Type.Integer(),
        }),
        Type.Object({
          artifact_id: Type.String(),
          error: Type.Object(
            { code: Type.String(), message: Type.String(), status: Type.Integer() },
            {
              description:
                '`artifact_not_found` (unknown, or another tenant’s), `artifact_already_deleted` or `artifact_expired`.',
            },
          ),
        }),
      ]),
      { description: 'One item per requested id, in request order.' },
    ),
  },
  { $id: 'BatchDownloadUrls' },
);
export type BatchDownloadUrls = Static<typeof BatchDownloadUrls>;
/** One item of a batch: the URL, or why this id has none. */
export type BatchDownloadUrl = BatchDownloadUrls['download_urls'][number];

/** A live link as the list shows it (the list is of one artifact, so no `artifact_id`). */
export const ListedLink = Type.Object(
  {
    link_id: LinkId,
    url: Type.String({ description: 'The shareable download URL.' }),
    expires_at: Timestamp,
    created_at: Timestamp,
  },
  { $id: 'ListedLink' },
);
export type ListedLink = Static<typeof ListedLink>;

/** A page of an artifact's live links (`allOf` Pagination and its items, as the other lists). */
export const LinkList = Type.Intersect(
  [
    Type.Ref(Pagination),
    Type.Object({ links: Type.Array(Type.Ref(ListedLink), { description: 'Unexpired links, newest first.' }) }),
  ],
  { $id: 'LinkList' },
);
export type LinkList = Static<typeof LinkList>;

export const RevokeLinkResult = Type.Object(
  { link_id: Type.String(), revoked: Type.Literal(true) },
  { $id: 'RevokeLinkResult' },
);
export type RevokeLinkResult = Static<typeof RevokeLinkResult>;

export const CreateLinkBody = Type.Object(
  {
    expires_in: Type.Optional(
      // No schema default: it would be filled in beside a ttl. Neither given is 7 days.
      Type.Integer({
        minimum: 1,
        maximum: 2_592_000,
        examples: [259_200],
        description: 'Lifetime in seconds; default 604800 (7 days).',
      }),
    ),
    ttl: Type.Optional(
      Type.String({
        description: 'Lifetime as a duration (`s`, `m`, `h` or `d`), at most `30d`; instead of expires_in.',
        examples: ['3d', '12h'],
      }),
    ),
  },
  { $id: 'CreateLinkRequest', additionalProperties: false },
);
export type CreateLinkBody = Static<typeof CreateLinkBody>;

export const LinkRecord = Type.Object(
  {
    link_id: LinkId,
    url: Type.String(),
    artifact_id: Type.String(),
    expires_at: Timestamp,
    created_at: Timestamp,
  },
  { $id: 'Link' },
);
export type LinkRecord = Static<typeof LinkRecord>;

/** A link to a sealed session's archive, as created and as listed. */
export const SessionLinkRecord = Type.Object(
  {
    link_id: LinkId,
    url: Type.String({
      description: 'The link’s page on the viewer origin: the files, their sizes, and “download all”.',
    }),
    archive_url: Type.String({
      description: 'The session’s archive (zip; `?format=tar.gz` for tar.gz) on the download origin.',
    }),
    session_id: Type.Optional(Type.String({ description: 'On creation.' })),
    expires_at: Timestamp,
    created_at: Timestamp,
  },
  { $id: 'SessionLink' },
);
export type SessionLinkRecord = Static<typeof SessionLinkRecord>;

export const SessionLinkList = Type.Intersect(
  [
    Type.Ref(Pagination),
    Type.Object({ links: Type.Array(Type.Ref(SessionLinkRecord), { description: 'Unexpired links, newest first.' }) }),
  ],
  { $id: 'SessionLinkList' },
);
export type SessionLinkList = Static<typeof SessionLinkList>;
