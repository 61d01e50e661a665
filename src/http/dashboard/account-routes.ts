import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BrowserSession } from '../../core/accounts/index.js';
import { PLANS } from '../../core/plans.js';
import { toIso } from '../../core/time.js';
import { html, type SafeHtml } from '../render/html.js';
import { formatBytes } from '../viewer/templates.js';
import { type DashboardContext, dashboardCaller, userError } from './context.js';
import { csrfField, dashboardPage, notice, sendHtml } from './layout.js';

function usage(label: string, used: number, limit: number, show: (n: number) => string): SafeHtml {
  return html`<div class="panel pad usage" data-usage="${label}">
<h2>${label}</h2>
<meter class="bar" min="0" max="${limit}" value="${Math.min(used, limit)}" high="${limit * 0.8}" optimum="0"></meter>
<div class="figures"><span>${show(used)} used</span><span class="muted">of ${show(limit)}</span></div>
</div>`;
}

const count = (n: number) => n.toLocaleString('en-US');

/** Overview (plan, usage against limits, the whoami figures) and API keys (create once-shown, list, revoke). */
export function accountRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { core } = ctx;

  app.get('/dashboard', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const who = await core.tenants.whoami(dashboardCaller(session));
    const activeKeys = (await core.deps.store.listApiKeys(session.tenant.id)).filter(
      (k) => k.revokedAt === null,
    ).length;
    const plan = PLANS[session.tenant.plan];
    const figures = Object.entries(who).filter(([k]) => k !== 'api_key_last_4');
    return sendHtml(
      reply,
      200,
      dashboardPage(
        session,
        '/dashboard',
        'Overview',
        html`${session.tenant.suspended && notice('error', 'This account is suspended: API calls are refused. Contact the operator.')}
<section class="panel pad"><h2>Plan</h2><p><strong data-plan>${who.plan === 'pro' ? 'Pro' : 'Free'}</strong> · tenant <span class="mono">${who.tenant_name}</span> · ${plan.rateLimitSustained} requests/s (burst ${plan.rateLimitBurst})</p></section>
<div class="grid">
${usage('Storage', who.usage_storage_bytes, who.plan_storage_limit_bytes, formatBytes)}
${usage('Requests this month', who.usage_requests_month, who.plan_requests_limit_month, count)}
${usage('Active download links', who.active_links, who.max_active_links, count)}
${usage('API keys', activeKeys, plan.apiKeys, count)}
</div>
<section class="panel pad"><h2>Account figures (as whoami reports them)</h2>
<table><tbody>${figures.map(([k, v]) => html`<tr><th scope="row" class="mono">${k}</th><td data-field="${k}">${String(v)}</td></tr>`)}</tbody></table>
</section>`,
      ),
    );
  });

  const keysPage = async (
    reply: FastifyReply,
    session: BrowserSession,
    status: number,
    top: SafeHtml | string = '',
  ) => {
    const keys = (await core.deps.store.listApiKeys(session.tenant.id)).slice().reverse();
    const rows = keys.map(
      (
        k,
      ) => html`<tr data-key="${k.id}"><td class="mono">…${k.last4}</td><td class="mono">${k.id}</td><td>${toIso(k.createdAt)}</td>
<td>${k.revokedAt === null ? html`<form method="post" action="/dashboard/keys/${k.id}/revoke">${csrfField(session.csrf)}<button class="btn danger small" type="submit">Revoke</button></form>` : html`<span class="muted">revoked ${toIso(k.revokedAt)}</span>`}</td></tr>`,
    );
    return sendHtml(
      reply,
      status,
      dashboardPage(
        session,
        '/dashboard/keys',
        'API keys',
        html`${top}
<section class="panel pad"><h2>New key</h2><p>Keys act for the whole account on the API, the CLI, the SDKs and the MCP servers. A new key is shown once.</p>
<form method="post" action="/dashboard/keys">${csrfField(session.csrf)}<button class="btn" type="submit">Create API key</button></form></section>
<section class="panel pad"><h2>Keys</h2>
${keys.length === 0 ? html`<p class="muted">No keys yet.</p>` : html`<table><thead><tr><th>Key</th><th>Id</th><th>Created</th><th></th></tr></thead><tbody>${rows}</tbody></table>`}
</section>`,
      ),
    );
  };

  app.get('/dashboard/keys', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    return session ? keysPage(reply, session, 200) : reply;
  });

  app.post('/dashboard/keys', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    try {
      const key = await core.tenants.createKey(session.tenant);
      return keysPage(
        reply,
        session,
        201,
        html`<section class="panel pad" data-new-key><h2>Your new API key</h2>
<p class="success">Copy it now: it is shown only this once and Cairn keeps only a hash of it.</p>
<p class="secret" data-secret>${key}</p></section>`,
      );
    } catch (thrown) {
      const err = userError(thrown);
      return keysPage(reply, session, err.status, notice('error', err.message));
    }
  });

  app.post('/dashboard/keys/:id/revoke', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { id } = request.params as { id: string };
    try {
      await core.tenants.revokeKey(session.tenant, id);
      return keysPage(reply, session, 200, notice('success', 'Key revoked: the API refuses it from now on.'));
    } catch (thrown) {
      const err = userError(thrown);
      return keysPage(reply, session, err.status, notice('error', err.message));
    }
  });
}
