import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BrowserSession } from '../../core/accounts/index.js';
import { PLANS } from '../../core/plans.js';
import { formatBytes, formatCount } from '../../shared/units.js';
import { html, type SafeHtml } from '../render/html.js';
import { confirmPage } from './confirm.js';
import { type DashboardContext, dashboardCaller, userError } from './context.js';
import { csrfField, dashboardPage, notice, sendHtml, shortTime } from './layout.js';

function usage(label: string, used: number, limit: number, show: (n: number) => string): SafeHtml {
  return html`<div class="panel pad usage" data-usage="${label}">
<h2>${label}</h2>
<meter class="bar" min="0" max="${limit}" value="${Math.min(used, limit)}" high="${limit * 0.8}" optimum="0"></meter>
<div class="figures"><span>${show(used)} used</span><span class="muted">of ${show(limit)}</span></div>
</div>`;
}

const count = formatCount;

/** A new tenant's first screen: how to push a first file, from a key to the CLI or plain HTTP. */
function gettingStarted(api: string, haveKey: boolean): SafeHtml {
  return html`<section class="panel pad" data-getting-started><h2>Push your first file</h2>
<ol class="steps">
<li>${haveKey ? 'Use one of your' : 'Create an'} <a href="/dashboard/keys">API key</a> (it is shown once).</li>
<li>With the CLI (<code>npm link</code> in a Cairn checkout puts <code>cairn</code> on your PATH):
<pre class="snippet">cairn login --url ${api}
cairn push report.md</pre></li>
<li>Or with plain HTTP:
<pre class="snippet">curl -H "Authorization: Bearer $CAIRN_API_KEY" -F file=@report.md ${api}/v1/artifacts</pre></li>
</ol>
<p class="muted">It then appears under <a href="/dashboard/artifacts">Artifacts</a>, where you can preview it, share a link or publish a page.</p>
</section>`;
}

/** Where an MCP client connects: the hosted endpoint (OAuth or a key), or the local stdio server. */
function connectPanel(api: string): SafeHtml {
  return html`<section class="panel pad" data-connect-mcp><h2>Connect an MCP client</h2>
<p>MCP URL: <code class="secret" data-mcp-url>${api}/mcp</code></p>
<p>Add it as a remote (Streamable HTTP) server in your MCP client: it signs you in here and asks which permissions to grant (they are listed under <a href="/dashboard/apps">Connected apps</a>). A client that takes headers can send <code>Authorization: Bearer</code> with an API key instead.</p>
<p>For the local server over stdio (it can also upload files from your disk), with <code>cairn</code> on your PATH:</p>
<pre class="snippet">{"mcpServers": {"cairn": {"command": "cairn", "args": ["mcp"],
  "env": {"CAIRN_API_URL": "${api}", "CAIRN_API_KEY": "ak_live_…"}}}}</pre>
</section>`;
}

/** Overview (plan, usage against limits, the whoami figures) and API keys (create once-shown, list, revoke). */
export function accountRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { core } = ctx;

  app.get('/dashboard', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const who = await core.tenants.whoami(dashboardCaller(session));
    const activeKeys = (await core.deps.tenantStore.listApiKeys(session.tenant.id)).filter(
      (k) => k.revokedAt === null,
    ).length;
    const plan = PLANS[session.tenant.plan];
    const caller = dashboardCaller(session);
    const empty = (await core.artifacts.list(caller, { limit: '1' })).artifacts.length === 0;
    const api = core.deps.origins.api;
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
${empty && gettingStarted(api, activeKeys > 0)}
${connectPanel(api)}`,
      ),
    );
  });

  const keysPage = async (
    reply: FastifyReply,
    session: BrowserSession,
    status: number,
    top: SafeHtml | string = '',
  ) => {
    const keys = (await core.deps.tenantStore.listApiKeys(session.tenant.id)).slice().reverse();
    const rows = keys.map(
      (
        k,
      ) => html`<tr data-key="${k.id}"><td class="mono">…${k.last4}</td><td class="mono">${k.id}</td><td class="nowrap">${shortTime(k.createdAt)}</td>
<td>${k.revokedAt === null ? html`<a class="btn danger small" href="/dashboard/keys/${k.id}/revoke">Revoke…</a>` : html`<span class="muted">revoked ${shortTime(k.revokedAt)}</span>`}</td></tr>`,
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
${keys.length === 0 ? html`<p class="muted">No keys yet.</p>` : html`<div class="table-scroll"><table><thead><tr><th>Key</th><th>Id</th><th>Created</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`}
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

  app.get('/dashboard/keys/:id/revoke', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const { id } = request.params as { id: string };
    const key = (await core.deps.tenantStore.listApiKeys(session.tenant.id)).find(
      (k) => k.id === id && k.revokedAt === null,
    );
    if (!key) return keysPage(reply, session, 404, notice('error', 'No such active key.'));
    return sendHtml(
      reply,
      200,
      confirmPage(session, '/dashboard/keys', {
        title: `Revoke key …${key.last4}?`,
        consequence: `Every program using the key ending in ${key.last4} (the CLI, SDKs, MCP servers, scripts) is refused from the next request on. This cannot be undone.`,
        action: `/dashboard/keys/${encodeURIComponent(key.id)}/revoke`,
        button: 'Revoke key',
        back: '/dashboard/keys',
      }),
    );
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
