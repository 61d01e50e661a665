import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CONTENT_TOKEN_SECONDS } from '../../core/content-token.js';
import { isCairnError } from '../../core/errors.js';
import type { Core } from '../../core/index.js';
import type { LivePage } from '../../core/pages.js';
import { publicPageUrl } from '../../core/records.js';
import { parseCookies, setCookie } from '../dashboard/cookies.js';
import { pageRenderer } from '../render/page-kind.js';
import { messagePage, NOT_FOUND_HTML, passwordPage, shellPage } from './templates.js';

/**
 * `{viewer}/a/<slug>`: the page shell around content served by the content origin, the password
 * form of gated pages and the report form. The shell itself runs no script at all.
 */

/** The shell's own policy: no script, frames and images only from the content origin. */
export function shellCsp(contentOrigin: string): string {
  return (
    `default-src 'none'; style-src 'unsafe-inline'; img-src ${contentOrigin}; frame-src ${contentOrigin}; ` +
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
  );
}

export type Html = { value: string } | string;

export function sendPage(core: Core, reply: FastifyReply, status: number, page: Html): FastifyReply {
  return (
    reply
      .status(status)
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Content-Security-Policy', shellCsp(core.deps.origins.content))
      .header('Referrer-Policy', 'no-referrer')
      // Shells may carry a content token and pages can be taken down at any moment: never cache.
      .header('Cache-Control', 'no-store')
      .send(typeof page === 'string' ? page : page.value)
  );
}

/** The one 404 page of the viewer: unknown, unpublished, expired pages and any other path. */
export function sendNotFound(core: Core, reply: FastifyReply): FastifyReply {
  return sendPage(core, reply, 404, NOT_FOUND_HTML);
}

const FORM_BODY_LIMIT = 16 * 1024;

/** A form field as a string (a browser form sends each once; anything else counts as absent). */
function field(body: unknown, name: string): string | undefined {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

const slugOf = (request: FastifyRequest) => (request.params as { slug: string }).slug;
const pagePath = (slug: string) => `/a/${encodeURIComponent(slug)}`;

/**
 * After an unlock the content token rides in a cookie scoped to the page's own path (no other
 * page, and not the content origin, ever receives it) and lives as long as the token, so the
 * unlock POST can redirect to the page's address and a refresh shows the page again.
 */
const UNLOCK_COOKIE = 'cairn_page';

export function viewerPageRoutes(app: FastifyInstance, core: Core): void {
  /** The shell of a live page; with the content token of an unlocked gated page, by stored type only. */
  const shell = (live: LivePage, token?: string) =>
    shellPage({
      ...live,
      kind: pageRenderer(live.artifact, token !== undefined),
      contentOrigin: core.deps.origins.content,
      publicUrl: publicPageUrl(core.deps.origins, live.page.slug),
      token,
    });

  // The password and report forms post ordinary HTML forms.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  );

  const notFound = (reply: FastifyReply) => sendNotFound(core, reply);

  app.get('/a/:slug', async (request, reply) => {
    const slug = slugOf(request);
    const live = await core.pages.resolve(slug);
    if (!live) return notFound(reply);
    if (live.page.access !== 'password') return sendPage(core, reply, 200, shell(live));
    const token = parseCookies(request.headers.cookie).get(UNLOCK_COOKIE);
    if (!token || !core.pages.acceptsContentToken(live.page, token)) {
      return sendPage(core, reply, 200, passwordPage(slug));
    }
    return sendPage(core, reply, 200, shell(live, token));
  });

  app.post('/a/:slug/unlock', async (request, reply) => {
    const slug = slugOf(request);
    const password = field(request.body, 'password') ?? '';
    let token: string;
    try {
      token = (await core.pages.unlock(slug, { password }, request.ip)).content_token;
    } catch (err) {
      if (!isCairnError(err)) throw err;
      switch (err.code) {
        case 'unauthorized':
          return sendPage(core, reply, 401, passwordPage(slug, 'That password is not right. Try again.'));
        case 'invalid_request':
          return sendPage(core, reply, 400, passwordPage(slug, 'Enter the password.'));
        case 'rate_limited':
          if (err.extras.retryAfterSeconds !== undefined)
            reply.header('Retry-After', String(err.extras.retryAfterSeconds));
          return sendPage(core, reply, 429, passwordPage(slug, 'Too many attempts. Wait a minute, then try again.'));
        case 'artifact_not_found':
          return notFound(reply);
        default:
          throw err;
      }
    }
    const secure = core.deps.origins.viewer.startsWith('https:');
    return reply
      .header('Set-Cookie', setCookie(UNLOCK_COOKIE, token, secure, CONTENT_TOKEN_SECONDS, pagePath(slug)))
      .header('Cache-Control', 'no-store')
      .redirect(pagePath(slug), 303);
  });

  app.post('/a/:slug/report', async (request, reply) => {
    const slug = slugOf(request);
    const back = pagePath(slug);
    try {
      await core.pages.report(
        slug,
        { reason: field(request.body, 'reason'), detail: field(request.body, 'detail') },
        request.ip,
      );
    } catch (err) {
      if (!isCairnError(err) || err.code !== 'rate_limited') throw err;
      if (err.extras.retryAfterSeconds !== undefined) reply.header('Retry-After', String(err.extras.retryAfterSeconds));
      const message = 'You have sent several reports about this page already. Please try again later.';
      return sendPage(core, reply, 429, messagePage('Too many reports', message, 'error', back));
    }
    const message = 'Your report was received. An operator will review this page.';
    return sendPage(core, reply, 200, messagePage('Thanks, received', message, 'success', back));
  });
}
