import type { FastifyInstance } from 'fastify';
import { PUBLIC_CLIENT_ID, PUBLIC_CLIENT_NAME, SCOPE_OF, TIER_LABEL } from '../../core/accounts/index.js';
import { html, type SafeHtml } from '../render/html.js';
import { confirmPage } from './confirm.js';
import type { DashboardContext } from './context.js';
import { dashboardPage, notice, sendHtml, shortTime } from './layout.js';

/** Connected apps: the user's OAuth grants (client, tier, when), each revocable at once. */
export function appsRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const page = async (
    request: Parameters<typeof ctx.session>[0],
    reply: Parameters<typeof sendHtml>[0],
    top: SafeHtml | string = '',
  ) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const grants = await ctx.accounts.store.listGrants(session.user.id);
    const rows = grants.map((g) => {
      const name = g.clientId === PUBLIC_CLIENT_ID ? PUBLIC_CLIENT_NAME : (g.clientName ?? g.clientId);
      return html`<tr data-grant="${g.id}"><td>${name}${g.clientId !== PUBLIC_CLIENT_ID && html` <span class="badge warn">unverified</span>`}</td>
<td data-tier="${g.tier}">${TIER_LABEL[g.tier]} <span class="muted mono">${SCOPE_OF[g.tier]}</span></td><td class="nowrap">${shortTime(g.createdAt)}</td><td class="nowrap">${shortTime(g.updatedAt)}</td>
<td><a class="btn danger small" href="/dashboard/apps/${g.id}/revoke">Revoke…</a></td></tr>`;
    });
    return sendHtml(
      reply,
      200,
      dashboardPage(
        session,
        '/dashboard/apps',
        'Connected apps',
        html`${top}<section class="panel pad"><p>MCP clients you connected with OAuth. Revoking one ends its access at once; it can ask you again.</p>
${grants.length === 0 ? html`<p class="muted">No connected apps.</p>` : html`<div class="table-scroll"><table><thead><tr><th>App</th><th>Permission</th><th>Connected</th><th>Last authorized</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`}
</section>`,
      ),
    );
  };

  app.get('/dashboard/apps', { schema: { hide: true } }, async (request, reply) => page(request, reply));

  app.get('/dashboard/apps/:id/revoke', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const { id } = request.params as { id: string };
    const grant = (await ctx.accounts.store.listGrants(session.user.id)).find((g) => g.id === id);
    if (!grant) return page(request, reply, notice('error', 'No such connected app.'));
    const name = grant.clientId === PUBLIC_CLIENT_ID ? PUBLIC_CLIENT_NAME : (grant.clientName ?? grant.clientId);
    return sendHtml(
      reply,
      200,
      confirmPage(session, '/dashboard/apps', {
        title: `Revoke ${name}?`,
        consequence: `${name} loses its access at once; it can ask you again.`,
        action: `/dashboard/apps/${encodeURIComponent(grant.id)}/revoke`,
        button: 'Revoke access',
        back: '/dashboard/apps',
      }),
    );
  });

  app.post('/dashboard/apps/:id/revoke', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { id } = request.params as { id: string };
    const revoked = await ctx.accounts.store.revokeGrant(session.user.id, id, ctx.core.deps.clock.now());
    return page(
      request,
      reply,
      revoked ? notice('success', 'Access revoked.') : notice('error', 'No such connected app.'),
    );
  });
}
