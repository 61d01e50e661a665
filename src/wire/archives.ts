import { type Static, Type } from '@sinclair/typebox';

/** A signed URL (one hour) of an archive of artifacts, and what it holds. */
export const ArchiveUrl = Type.Object(
  {
    archive_url: Type.String({ description: 'The archive, streamed from the content origin; no key needed.' }),
    expires_in: Type.Integer({ description: 'Seconds the URL stays valid.' }),
    format: Type.Union([Type.Literal('zip'), Type.Literal('tar.gz')]),
    filename: Type.String({ description: 'The name the archive downloads under, e.g. `run-42.zip`.' }),
    artifact_count: Type.Integer({ description: 'Artifacts it holds (beside manifest.json), at most 10,000.' }),
    size_bytes: Type.Integer({ description: 'Their bytes together (the archive adds headers and the manifest).' }),
  },
  { $id: 'ArchiveUrl' },
);
export type ArchiveUrl = Static<typeof ArchiveUrl>;
