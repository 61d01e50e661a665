import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Accounts, BrowserSession } from '../../core/accounts/index.js';
import { type CairnError, isCairnError } from '../../core/errors.js';
import { randomAlnum } from '../../core/ids.js';
import type { Core } from '../../core/index.js';
import type { Caller } from '../../core/tenants.js';
import { type CookieNames, cookieNames, parseCookies, setCookie } from './cookies.js';
import { dashboardPage, errorPage, notice, sendHtml } from './layout.js';

/** What the dashboard's (and the consent screen's) route handlers share. */
export class DashboardContext {
  constructor(
    readonly core: Core,
    readonly accounts: Accounts,
  ) {}

  get cookies(): CookieNames {
    return cookieNames(this.core.deps.origins.api);
  }

  async session(request: FastifyRequest): Promise<BrowserSession | null> {
    return this.accounts.sessions.resolve(parseCookies(request.headers.cookie).get(this.cookies.session));
  }

  /** The signed-in session, or null after answering with a redirect to the login page. */
  async requireSession(request: FastifyRequest, reply: FastifyReply): Promise<BrowserSession | null> {
    const session = await this.session(request);
    if (!session) {
      const next = request.method === 'GET' ? request.url : '/dashboard';
      reply.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
    }
    return session;
  }

  /** Refuses (403 page) a POST whose CSRF token does not match the session; true when it may proceed. */
  checkCsrf(request: FastifyRequest, reply: FastifyReply, boundTo: string): boolean {
    if (this.accounts.sessions.checkCsrf(boundTo, field(request.body, 'csrf'))) return true;
    sendHtml(
      reply,
      403,
      errorPage(
        'Form expired',
        'This form is missing its security token or it no longer matches your session. Go back, reload the page and try again.',
      ),
    );
    return false;
  }

  /** The pre-session value login and sign-up forms bind their CSRF token to; set as a cookie when new. */
  preSession(request: FastifyRequest, reply: FastifyReply): string {
    const existing = parseCookies(request.headers.cookie).get(this.cookies.preSession);
    if (existing && /^[A-Za-z0-9]{32}$/.test(existing)) return existing;
    const value = randomAlnum(32);
    reply.header('Set-Cookie', setCookie(this.cookies.preSession, value, this.cookies.secure));
    return value;
  }

  startSession(reply: FastifyReply, session: BrowserSession): void {
    const { session: name, preSession, secure } = this.cookies;
    reply.header('Set-Cookie', [setCookie(name, session.id, secure), setCookie(preSession, '', secure, 0)]);
  }

  endSession(reply: FastifyReply): void {
    reply.header('Set-Cookie', setCookie(this.cookies.session, '', this.cookies.secure, 0));
  }
}

/** The dashboard acts as the user's tenant through the core; it has no API key of its own. */
export function dashboardCaller(session: BrowserSession): Caller {
  return {
    tenant: session.tenant,
    key: { id: 'dashboard', tenantId: session.tenant.id, hash: '', last4: '', createdAt: 0, revokedAt: null },
  };
}

/** A form field as a string (browsers send each once; anything else counts as absent). */
export function field(body: unknown, name: string): string | undefined {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The pages logging in may lead to: the dashboard's own, and the consent screen that sent the user to log in. */
const isOwnPage = (pathname: string) =>
  pathname === '/dashboard' || pathname.startsWith('/dashboard/') || pathname === '/oauth/authorize';

/**
 * Where to go after logging in (`next`, from the query or the form's hidden field), as a path on
 * the API origin, else `/dashboard`. The value is resolved against the origin the way a browser
 * resolves a Location (the URL standard's parser, which drops TAB, CR and LF and reads `\` as
 * `/`), so `/\t/evil.example` is seen as the `//evil.example` a browser would go to. It is kept
 * only when the origin is unchanged and the path is one of the dashboard's own pages, and sent back
 * as the parser serialised it, so no byte a browser would read otherwise reaches the Location.
 */
export function safeNext(next: unknown, apiOrigin: string): string {
  if (typeof next !== 'string' || next === '') return '/dashboard';
  let url: URL;
  try {
    url = new URL(next, apiOrigin);
  } catch {
    return '/dashboard';
  }
  if (url.origin !== new URL(apiOrigin).origin || !isOwnPage(url.pathname)) return '/dashboard';
  return `${url.pathname}${url.search}`;
}

/** A page of `section` showing the error a person caused (see `userError`; anything else is rethrown). */
export function sendUserError(
  reply: FastifyReply,
  session: BrowserSession,
  section: string,
  title: string,
  thrown: unknown,
): FastifyReply {
  const err = userError(thrown);
  return sendHtml(reply, err.status, dashboardPage(session, section, title, notice('error', err.message)));
}

/** An error a person caused (shown on the page), else rethrown for the 500 handler. */
export function userError(err: unknown): CairnError {
  if (isCairnError(err) && err.status < 500) return err;
  throw err;
}
