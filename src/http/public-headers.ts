import type { FastifyInstance } from 'fastify';

/**
 * For a response of a public origin that no route gave a policy (errors, unknown paths, health):
 * it loads nothing, runs nothing, and no page may frame it.
 */
export const LOCKED_DOWN_CSP = "default-src 'none'; sandbox; frame-ancestors 'none'";

/** A page of our own with its inline style sheet (a dead link's notice): the same, with that style. */
export const NOTICE_PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox; frame-ancestors 'none'";

/**
 * Headers on every response of the viewer and content origins, error and 404 answers included:
 * no MIME sniffing, no indexing, and a Content-Security-Policy (a route's own policy wins).
 */
export function installPublicHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('X-Robots-Tag', 'noindex, nofollow');
    if (!reply.hasHeader('Content-Security-Policy')) reply.header('Content-Security-Policy', LOCKED_DOWN_CSP);
  });
}
