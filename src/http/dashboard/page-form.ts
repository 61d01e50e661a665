import type { BrowserSession } from '../../core/accounts/index.js';
import { PLANS } from '../../core/plans.js';
import { isHtmlType } from '../../core/renderer.js';
import type { PageRow } from '../../ports/metadata-store.js';
import type { ArtifactRecord } from '../../wire/artifacts.js';
import { html, type SafeHtml } from '../render/html.js';
import { field } from './context.js';
import { csrfField } from './layout.js';

/** What the access choice of the publish form may say; `keep` keeps the page's current password. */
type AccessChoice = 'keep' | 'none' | 'password';

/** Whether the page row (live or offline) has a password its owner can keep. */
const gated = (row: PageRow | null) => row?.access === 'password' && row.passwordHash !== null;

/**
 * The publish form's body for `PageService.publish` (with `keepPassword`). Whatever the form does
 * not say stays as the page has it: a gated page keeps its password unless "open to everyone" or
 * a new password is chosen, so an unchanged "Update page" never drops the gate.
 */
export function publishBody(form: unknown, row: PageRow | null): Record<string, unknown> {
  const said = field(form, 'access');
  const access: AccessChoice =
    said === 'none' || said === 'password' || said === 'keep' ? said : gated(row) ? 'keep' : 'none';
  const visibility = field(form, 'visibility');
  const title = field(form, 'title');
  const body: Record<string, unknown> = {
    visibility: visibility === 'public' || visibility === 'unlisted' ? visibility : (row?.visibility ?? 'unlisted'),
    // An absent field (a form from before titles) keeps the title; an emptied one clears it.
    title: title === undefined ? row?.title : title.trim() === '' ? null : title,
  };
  if (access === 'none') return { ...body, access: 'none' };
  const password = field(form, 'password') ?? '';
  // "New password" with an empty box means nothing was typed: keep the current one.
  return { ...body, access: 'password', ...(access === 'password' && password !== '' ? { password } : {}) };
}

/** The "Public page" panel: where it is, who may open it, and the publish form filled with what it has. */
export function pagePanel(
  session: BrowserSession,
  a: ArtifactRecord,
  row: PageRow | null,
  action: string,
  unpublish: SafeHtml | '',
): SafeHtml {
  const live = a.page !== null;
  const hasPassword = gated(row);
  const canPassword = PLANS[session.tenant.plan].passwordPages && !isHtmlType(a.content_type);
  const visibility = row?.visibility ?? 'unlisted';
  const option = (value: string) =>
    html`<option value="${value}"${visibility === value ? html` selected` : ''}>${value}</option>`;
  const radio = (value: AccessChoice, label: string, checked: boolean, hint = '') =>
    html`<label><input type="radio" name="access" value="${value}"${checked ? html` checked` : ''}> <span>${label}${hint && html`<small>${hint}</small>`}</span></label>`;
  const state = live
    ? html`<p>Live at <a href="${a.page?.public_url ?? ''}" rel="noreferrer" data-public-url>${a.page?.public_url ?? ''}</a></p>
<p data-page-access="${hasPassword ? 'password' : 'none'}">${
        hasPassword
          ? html`<span class="badge">Password required</span> Visitors must type the page's password.`
          : html`<span class="badge">Open</span> Anyone with the link can view it (${visibility}).`
      }</p>`
    : html`<p class="muted">Not published.${hasPassword ? ' Publishing again keeps its password unless you choose otherwise.' : ''}</p>`;
  const accessChoices = hasPassword
    ? html`${radio('keep', 'Keep the current password', true)}
${radio('password', 'Set a new password', false, 'Type it below.')}
${radio('none', 'Open to everyone', false, 'Removes the password: anyone with the link can view the page.')}`
    : html`${radio('none', 'Open to anyone with the link', true)}
${canPassword ? radio('password', 'Password required', false, 'Type it below.') : ''}`;
  const note = canPassword
    ? ''
    : html`<p class="muted">${
        isHtmlType(a.content_type)
          ? 'Password access is not available for HTML artifacts.'
          : 'Password-protected pages need the Pro plan.'
      }</p>`;
  return html`<section class="panel pad" data-page-state="${live ? 'live' : 'none'}"><h2>Public page</h2>
${state}
<form method="post" action="${action}" class="publish">${csrfField(session.csrf)}
<div><label for="title">Title</label><input id="title" name="title" maxlength="200" value="${row?.title ?? ''}"></div>
<div><label for="visibility">Visibility</label><select id="visibility" name="visibility">${option('unlisted')}${option('public')}</select></div>
<fieldset class="tiers"><legend>Access</legend>${accessChoices}</fieldset>${note}
${hasPassword || canPassword ? html`<div><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" maxlength="1024"></div>` : ''}
<div><button class="btn small" type="submit">${live ? 'Update page' : 'Publish'}</button></div></form>
${unpublish && html`<div class="actions">${unpublish}</div>`}
</section>`;
}
