import type { FastifyReply } from 'fastify';
import type { ArtifactRow } from '../../ports/metadata-store.js';
import { contentDisposition } from './serve-bytes.js';

/**
 * Sends a document the content origin rendered from an artifact (Markdown, a text preview) under
 * its renderer's policy; `headers` (no-referrer, no-store for gated pages) come last and win.
 */
export function sendRenderedDocument(
  reply: FastifyReply,
  artifact: ArtifactRow,
  csp: string,
  headers: Record<string, string>,
  doc: string,
): FastifyReply {
  reply
    .status(200)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Content-Disposition', contentDisposition('inline', `${artifact.filename}.html`))
    .header('Content-Security-Policy', csp)
    .header('Cache-Control', 'private, max-age=0, must-revalidate');
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.send(doc);
}
