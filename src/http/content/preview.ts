import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { blobKey } from '../../core/context.js';
import type { Core } from '../../core/index.js';
import type { LivePage } from '../../core/pages.js';
import type { RendererKind } from '../../core/renderer.js';
// The bounds only: the renderers themselves run on the render workers.
import { PREVIEW_MAX_BYTES } from '../render/preview/budget.js';
import { documentKey, type PageDocuments } from './page-documents.js';
import { sendRenderedDocument } from './send-document.js';

/**
 * Text previews (text, code, JSON, CSV, transcripts): our own document, no script, no links,
 * nothing to load; sandboxed with no permission at all even when opened directly.
 */
export function previewCsp(viewerOrigin: string): string {
  return (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; base-uri 'none'; sandbox; " +
    `frame-ancestors ${viewerOrigin}`
  );
}

/** At most `limit` bytes from the start of a stream; the stream is closed once they are in. */
async function readPrefix(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    chunks.push(size + buf.length > limit ? buf.subarray(0, limit - size) : buf);
    size = Math.min(limit, size + buf.length);
    if (size >= limit) break;
  }
  stream.destroy();
  return Buffer.concat(chunks, size);
}

export async function servePreview(
  core: Core,
  documents: PageDocuments,
  reply: FastifyReply,
  live: LivePage,
  kind: RendererKind,
  headers: Record<string, string>,
): Promise<FastifyReply> {
  const { artifact, page } = live;
  const title = page.title ?? artifact.filename;
  const { doc, status } = await documents.get(documentKey(kind, artifact, title), title, async () => {
    const length = Math.min(artifact.sizeBytes, PREVIEW_MAX_BYTES);
    const bytes =
      length === 0
        ? Buffer.alloc(0)
        : await readPrefix(
            await core.deps.blobs.read(blobKey(artifact.tenantId, artifact.contentHash), { start: 0, end: length - 1 }),
            length,
          );
    return {
      kind: 'preview',
      input: {
        kind,
        title,
        filename: artifact.filename,
        contentType: artifact.contentType,
        bytes,
        sizeBytes: artifact.sizeBytes,
      },
    };
  });
  return sendRenderedDocument(reply, artifact, previewCsp(core.deps.origins.viewer), headers, doc, status);
}
