import type { FastifyInstance } from 'fastify';
import type { BrowserSession } from '../../core/accounts/index.js';
import { formatBytes } from '../../shared/units.js';
import type { ArtifactRecord } from '../../wire/artifacts.js';
import type { LinkList } from '../../wire/sharing.js';
import { html, type SafeHtml } from '../render/html.js';
import { confirmPage } from './confirm.js';
import { type DashboardContext, dashboardCaller, field, sendUserError, userError } from './context.js';
import { csrfField, sendHtml, shortTime } from './layout.js';

const LIFETIMES = [
  ['86400', '1 day'],
  ['604800', '7 days'],
  ['2592000', '30 days'],
] as const;

export const artifactPath = (id: string) => `/dashboard/artifacts/${encodeURIComponent(id)}`;
const revokePath = (linkId: string, artifactId: string) =>
  `/dashboard/links/${encodeURIComponent(linkId)}/revoke?artifact=${encodeURIComponent(artifactId)}`;

/** The "Share links" panel of an artifact's page: make one, see the live ones, revoke one. */
export function linksPanel(session: BrowserSession, a: ArtifactRecord, links: LinkList): SafeHtml {
  const rows = links.links.map(
    (l) => html`<tr data-link="${l.link_id}"><td><a class="mono" href="${l.url}" rel="noreferrer">${l.url}</a></td>
<td class="nowrap">${shortTime(l.expires_at)} UTC</td>
<td><a class="btn danger small" href="${revokePath(l.link_id, a.artifact_id)}">Revoke…</a></td></tr>`,
  );
  return html`<section class="panel pad" data-links><h2>Share links</h2>
<p>A share link downloads the file without a key, for anyone who has it, until it expires or you revoke it.</p>
<form method="post" action="${artifactPath(a.artifact_id)}/links" class="inline-form">${csrfField(session.csrf)}
<label for="expires_in">Lifetime</label><select id="expires_in" name="expires_in">${LIFETIMES.map(
    ([v, label]) => html`<option value="${v}"${v === '604800' ? html` selected` : ''}>${label}</option>`,
  )}</select>
<button class="btn small" type="submit">Create share link</button></form>
${
  rows.length === 0
    ? html`<p class="muted">No live links.</p>`
    : html`<div class="table-scroll"><table><thead><tr><th>Link</th><th>Expires</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`
}${links.has_more ? html`<p class="muted">Showing the newest ${links.links.length}; <code>cairn links ${a.artifact_id} --all</code> lists every one.</p>` : ''}
</section>`;
}

/** Creating a share link, and revoking one after a confirmation page. */
export function linkRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { core } = ctx;

  app.post('/dashboard/artifacts/:id/links', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { id } = request.params as { id: string };
    const seconds = Number(field(request.body, 'expires_in') ?? '604800');
    try {
      await core.sharing.createLink(dashboardCaller(session), id, { expiresIn: seconds });
      return reply.redirect(`${artifactPath(id)}?done=linked`, 303);
    } catch (thrown) {
      return sendUserError(reply, session, '/dashboard/artifacts', 'Share link', thrown);
    }
  });

  app.get('/dashboard/links/:linkId/revoke', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const { linkId } = request.params as { linkId: string };
    const artifactId = (request.query as Record<string, string | undefined>).artifact ?? '';
    let name = 'this file';
    try {
      const a = await core.artifacts.get(dashboardCaller(session), artifactId);
      name = `${a.filename} (${formatBytes(a.size_bytes)})`;
    } catch (thrown) {
      userError(thrown);
    }
    return sendHtml(
      reply,
      200,
      confirmPage(session, '/dashboard/artifacts', {
        title: 'Revoke share link?',
        consequence: `Anyone who has the link ${linkId} will no longer be able to download ${name}. This cannot be undone; you can create a new link afterwards.`,
        action: `/dashboard/links/${encodeURIComponent(linkId)}/revoke`,
        button: 'Revoke link',
        back: artifactId ? artifactPath(artifactId) : '/dashboard/artifacts',
        hidden: { artifact: artifactId },
      }),
    );
  });

  app.post('/dashboard/links/:linkId/revoke', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { linkId } = request.params as { linkId: string };
    const artifactId = field(request.body, 'artifact') ?? '';
    try {
      await core.sharing.revokeLink(dashboardCaller(session), linkId);
    } catch (thrown) {
      return sendUserError(reply, session, '/dashboard/artifacts', 'Share link', thrown);
    }
    const back = /^art_[A-Za-z0-9]{16}$/.test(artifactId) ? artifactPath(artifactId) : '/dashboard/artifacts';
    return reply.redirect(`${back}?done=revoked`, 303);
  });
}
