import type { FastifyReply } from 'fastify';
import type { BrowserSession } from '../../core/accounts/index.js';
import { toIso } from '../../core/time.js';
import { type HtmlValue, html, type SafeHtml } from '../render/html.js';
import { pageFrame } from '../render/page-frame.js';
import { DASHBOARD_CSS_PATH } from './styles.js';

/** Security headers of every dashboard (and consent) page. No script runs on any of them. */
export function dashboardCsp(extraFormAction: string[] = []): string {
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
    // A form submission's redirect is checked against form-action too (the consent form redirects to the client).
    `form-action 'self'${extraFormAction.map((o) => ` ${o}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function sendHtml(
  reply: FastifyReply,
  status: number,
  page: SafeHtml,
  opts: { formActionOrigins?: string[] } = {},
): FastifyReply {
  return reply
    .status(status)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Content-Security-Policy', dashboardCsp(opts.formActionOrigins))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY')
    .header('Cache-Control', 'no-store')
    .send(page.value);
}

export function document(title: string, body: HtmlValue): SafeHtml {
  return pageFrame({
    title: `${title} · Cairn`,
    head: html`<link rel="stylesheet" href="${DASHBOARD_CSS_PATH}">`,
    body,
  });
}

const SECTIONS = [
  ['/dashboard', 'Overview'],
  ['/dashboard/keys', 'API keys'],
  ['/dashboard/artifacts', 'Artifacts'],
  ['/dashboard/webhooks', 'Webhooks'],
  ['/dashboard/apps', 'Connected apps'],
] as const;

/** A signed-in page: navigation, the account, a log-out form (with its CSRF token), then the content. */
export function dashboardPage(session: BrowserSession, current: string, title: string, body: HtmlValue): SafeHtml {
  const nav = SECTIONS.map(
    ([href, label]) => html`<a href="${href}"${current === href ? html` aria-current="page"` : ''}>${label}</a>`,
  );
  return document(
    title,
    html`<header class="topbar"><span class="brand">Cairn</span><nav class="nav">${nav}</nav><h1></h1>
<span class="muted" data-account>${session.user.email} · ${session.tenant.name}</span>
<form method="post" action="/logout">${csrfField(session.csrf)}<button class="btn secondary small" type="submit">Log out</button></form>
</header>
<main class="page"><h1>${title}</h1>${body}</main>`,
  );
}

/** A page without navigation (log in, sign up, consent, errors). */
export function centeredPage(title: string, body: HtmlValue, wide = false): SafeHtml {
  return document(
    title,
    html`<header class="topbar"><span class="brand">Cairn</span><h1></h1></header>
<main class="center"><div class="panel${wide ? ' wide' : ''}">${body}</div></main>`,
  );
}

export const csrfField = (token: string) => html`<input type="hidden" name="csrf" value="${token}">`;

export function errorPage(heading: string, message: string): SafeHtml {
  return centeredPage(
    heading,
    html`<h1 class="error">${heading}</h1><p>${message}</p><p><a href="/dashboard">Back to the dashboard</a></p>`,
  );
}

/** A one-line notice above a page's content. */
export const notice = (tone: 'success' | 'error', text: string | undefined) =>
  text ? html`<p class="${tone}" role="${tone === 'error' ? 'alert' : 'status'}">${text}</p>` : '';

/** A time (ISO text or epoch ms) as `2026-11-22 08:00` (UTC): short enough not to wrap in a table cell. */
export const shortTime = (at: string | number) =>
  (typeof at === 'number' ? toIso(at) : at).slice(0, 16).replace('T', ' ');
