import type { FastifyReply } from 'fastify';
import type { ArtifactRow } from '../../ports/metadata-store.js';
import { contentDisposition } from './serve-bytes.js';

/** How long to wait before reloading a page whose document could not be rendered yet (too many waiting). */
const BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * Sends a document the content origin rendered from an artifact (Markdown, a text preview) under
 * its renderer's policy; `headers` (no-referrer, no-store for gated pages) come last and win.
 * A 503 (renders were busy) says when to try again, and no cache keeps it.
 */
export function sendRenderedDocument(
  reply: FastifyReply,
  artifact: ArtifactRow,
  csp: string,
  headers: Record<string, string>,
  doc: string,
  status: 200 | 503 = 200,
): FastifyReply {
  reply
    .status(status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Content-Disposition', contentDisposition('inline', `${artifact.filename}.html`))
    .header('Content-Security-Policy', csp)
    .header('Cache-Control', status === 200 ? 'private, max-age=0, must-revalidate' : 'no-store');
  if (status === 503) reply.header('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return reply.send(doc);
}
