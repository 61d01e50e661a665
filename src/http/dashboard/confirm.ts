import type { BrowserSession } from '../../core/accounts/index.js';
import { html, type SafeHtml } from '../render/html.js';
import { csrfField, dashboardPage } from './layout.js';

/**
 * The page a destructive button leads to first (the dashboard runs no script, so no dialog): what
 * will happen, a button that does it (POST with the CSRF token) and a way back that does nothing.
 */
export function confirmPage(
  session: BrowserSession,
  section: string,
  opts: {
    title: string;
    consequence: string;
    action: string;
    button: string;
    back: string;
    /** Fields the POST carries besides the CSRF token. */
    hidden?: Record<string, string>;
  },
): SafeHtml {
  return dashboardPage(
    session,
    section,
    opts.title,
    html`<section class="panel pad" data-confirm><p>${opts.consequence}</p>
<div class="actions"><form method="post" action="${opts.action}">${csrfField(session.csrf)}${Object.entries(
      opts.hidden ?? {},
    ).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
    )}<button class="btn danger small" type="submit" data-confirm-button>${opts.button}</button></form>
<a class="btn secondary small" href="${opts.back}">Cancel</a></div></section>`,
  );
}
