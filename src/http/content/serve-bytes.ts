import type { FastifyReply, FastifyRequest } from 'fastify';
import { blobKey } from '../../core/context.js';
import type { BlobStore, ByteRange } from '../../ports/blob-store.js';
import type { ArtifactRow } from '../../ports/metadata-store.js';
import { LOCKED_DOWN_CSP } from '../public-headers.js';

/** RFC 6266 `Content-Disposition` with an ASCII fallback and the exact UTF-8 name. */
export function contentDisposition(kind: 'attachment' | 'inline', filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** Parses a single `bytes=` range; 'unsatisfiable' for one that cannot be served, null to send everything. */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Multi-range and other units are legal to ignore: the full body is a correct answer.
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

export interface ServeBytesOptions {
  /** Default `attachment`; public pages show images and HTML `inline`. */
  disposition?: 'attachment' | 'inline';
  /** Set after the defaults, so they can replace them (a page's own CSP, no-store for gated pages). */
  headers?: Record<string, string>;
}

/**
 * Streams an artifact's bytes to an anonymous client with the headers that keep untrusted
 * content inert: attachment disposition, nosniff, a sandboxing CSP and noindex.
 */
export async function serveArtifactBytes(
  request: FastifyRequest,
  reply: FastifyReply,
  blobs: BlobStore,
  artifact: ArtifactRow,
  opts: ServeBytesOptions = {},
): Promise<FastifyReply> {
  const etag = `"${artifact.contentHash}"`;
  reply
    .header('Content-Type', artifact.contentType)
    .header('Content-Disposition', contentDisposition(opts.disposition ?? 'attachment', artifact.filename))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Content-Security-Policy', LOCKED_DOWN_CSP)
    .header('X-Robots-Tag', 'noindex, nofollow')
    .header('Referrer-Policy', 'no-referrer')
    .header('Cache-Control', 'private, max-age=0, must-revalidate')
    .header('Accept-Ranges', 'bytes')
    .header('ETag', etag);
  for (const [name, value] of Object.entries(opts.headers ?? {})) reply.header(name, value);
  if (request.headers['if-none-match'] === etag) return reply.status(304).send();

  const size = artifact.sizeBytes;
  const range = parseRange(request.headers.range, size);
  if (range === 'unsatisfiable') {
    return reply.status(416).header('Content-Range', `bytes */${size}`).send();
  }
  const key = blobKey(artifact.tenantId, artifact.contentHash);
  if (range) {
    reply
      .status(206)
      .header('Content-Range', `bytes ${range.start}-${range.end}/${size}`)
      .header('Content-Length', String(range.end - range.start + 1));
    if (request.method === 'HEAD') return reply.send();
    return reply.send(await blobs.read(key, range));
  }
  reply.status(200).header('Content-Length', String(size));
  if (request.method === 'HEAD' || size === 0) return reply.send();
  return reply.send(await blobs.read(key));
}
