import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserSession } from '../../core/accounts/index.js';
import type { RawQuery } from '../../core/list-query.js';
import { formatBytes, formatCount } from '../../shared/units.js';
import { html, type SafeHtml } from '../render/html.js';
import { archiveRoutes, downloadAllButtons } from './archive-routes.js';
import { confirmPage } from './confirm.js';
import { type DashboardContext, dashboardCaller, sendUserError, userError } from './context.js';
import { csrfField, dashboardPage, notice, sendHtml, shortTime } from './layout.js';
import { artifactPath, linkRoutes, linksPanel } from './link-routes.js';
import { pagePanel, publishBody } from './page-form.js';
import { previewPanel } from './preview.js';

/** The list filters of the API, as form fields; `meta_key`/`meta_value` become one `metadata.<key>` filter. */
const FILTERS = [
  ['session_id', 'Session'],
  ['agent_id', 'Agent'],
  ['filename', 'Filename'],
  ['content_type', 'Content type'],
  ['created_after', 'Created after'],
  ['created_before', 'Created before'],
  ['meta_key', 'Metadata key'],
  ['meta_value', 'Metadata value'],
] as const;

const DONE: Record<string, string> = {
  published: 'Published: the page is live.',
  unpublished: 'Unpublished: the page is offline.',
  deleted: 'Artifact deleted.',
  linked: 'Share link created: it is listed below.',
  revoked: 'Share link revoked: its URL no longer works.',
};

function listQuery(form: Record<string, string | undefined>): RawQuery {
  const q: RawQuery = {};
  for (const [name] of FILTERS) {
    const v = form[name]?.trim();
    if (v && name !== 'meta_key' && name !== 'meta_value') q[name] = v;
  }
  const key = form.meta_key?.trim();
  if (key) q[`metadata.${key}`] = form.meta_value ?? '';
  if (form.transcript === 'true') q.transcript = 'true';
  if (form.cursor) q.cursor = form.cursor;
  return q;
}

/** A page of the Artifacts section. */
const page = (reply: FastifyReply, session: BrowserSession, status: number, title: string, body: SafeHtml | string) =>
  sendHtml(reply, status, dashboardPage(session, '/dashboard/artifacts', title, body));

/** Artifacts: the API's list with its filters, one artifact's record, publish/unpublish and delete. */
export function artifactRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { core } = ctx;
  linkRoutes(app, ctx);
  archiveRoutes(app, ctx, listQuery);

  app.get('/dashboard/artifacts', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const form = request.query as Record<string, string | undefined>;
    let body: SafeHtml | string;
    let status = 200;
    try {
      const page = await core.artifacts.list(dashboardCaller(session), listQuery(form));
      const next = new URLSearchParams(
        Object.entries({ ...form, cursor: page.next_cursor ?? '' }).filter((e): e is [string, string] => !!e[1]),
      );
      body = html`${
        page.artifacts.length === 0
          ? html`<p class="muted">No artifacts match.</p>`
          : html`${downloadAllButtons(form)}<div class="table-scroll"><table><thead><tr><th>Filename</th><th>Type</th><th>Size</th><th>Created</th><th>Session</th></tr></thead><tbody>
${page.artifacts.map((a) => html`<tr data-artifact="${a.artifact_id}"><td><a href="${artifactPath(a.artifact_id)}">${a.filename}</a></td><td class="mono">${a.content_type}</td><td class="nowrap">${formatBytes(a.size_bytes)}</td><td class="nowrap">${shortTime(a.created_at)}</td><td class="mono">${a.session_id ?? ''}</td></tr>`)}
</tbody></table></div>`
      }
${page.next_cursor && html`<p><a class="btn secondary small" href="/dashboard/artifacts?${next.toString()}">Next page</a></p>`}`;
    } catch (thrown) {
      const err = userError(thrown);
      status = err.status;
      body = notice('error', err.message);
    }
    const filters = html`<form method="get" action="/dashboard/artifacts" class="filters">
${FILTERS.map(([name, label]) => html`<div><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" value="${form[name] ?? ''}"></div>`)}
<div><label for="f-transcript">Only transcripts</label><select id="f-transcript" name="transcript"><option value="">no</option><option value="true"${form.transcript === 'true' ? html` selected` : ''}>yes</option></select></div>
<div><button class="btn" type="submit">Filter</button></div>
</form>`;
    return page(
      reply,
      session,
      status,
      'Artifacts',
      html`${notice('success', DONE[form.done ?? ''])}<section class="panel pad">${filters}</section><section class="panel pad">${body}</section>`,
    );
  });

  app.get('/dashboard/artifacts/:id', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const done = DONE[(request.query as Record<string, string>).done ?? ''];
    return detail(reply, session, (request.params as { id: string }).id, notice('success', done));
  });

  const detail = async (
    reply: FastifyReply,
    session: BrowserSession,
    id: string,
    top: SafeHtml | string,
    status = 200,
  ) => {
    let a: Awaited<ReturnType<typeof core.artifacts.get>>;
    try {
      a = await core.artifacts.get(dashboardCaller(session), id);
    } catch (thrown) {
      return sendUserError(reply, session, '/dashboard/artifacts', 'Artifact', thrown);
    }
    const caller = dashboardCaller(session);
    const pageRow = await core.deps.sharingStore.getPageForArtifact(session.tenant.id, a.artifact_id);
    const links = await core.sharing.listLinks(caller, a.artifact_id, {});
    const download = await core.sharing.downloadUrl(caller, a.artifact_id);
    const unpublish = html`<form method="post" action="${artifactPath(a.artifact_id)}/unpublish">${csrfField(session.csrf)}<button class="btn secondary small" type="submit">Unpublish</button></form>`;
    const rows: [string, string][] = [
      ['artifact_id', a.artifact_id],
      ['content_type', a.content_type],
      ['size', `${formatBytes(a.size_bytes)} (${formatCount(a.size_bytes)} bytes)`],
      ['content_hash', a.content_hash],
      ['session_id', a.session_id ?? ''],
      ['agent_id', a.agent_id ?? ''],
      ['created_at', a.created_at],
      ['expires_at', a.expires_at ?? 'never'],
      ['metadata', JSON.stringify(a.metadata)],
    ];
    return page(
      reply,
      session,
      status,
      a.filename,
      html`${top}
<div class="actions"><a class="btn small" href="${download.download_url}" rel="noreferrer" data-download>Download</a>
<a class="btn danger small" href="${artifactPath(a.artifact_id)}/delete">Delete…</a></div>
<section class="panel pad"><h2>Details</h2><div class="table-scroll"><table class="fields"><tbody>${rows.map(([k, v]) => html`<tr><th scope="row" class="mono">${k}</th><td class="mono" data-field="${k}">${v}</td></tr>`)}</tbody></table></div></section>
${await previewPanel(core.deps.blobs, session.tenant.id, a)}
${pagePanel(session, a, pageRow, `${artifactPath(a.artifact_id)}/publish`, a.page ? unpublish : '')}
${linksPanel(session, a, links)}`,
    );
  };

  app.get('/dashboard/artifacts/:id/delete', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const { id } = request.params as { id: string };
    let a: Awaited<ReturnType<typeof core.artifacts.get>>;
    try {
      a = await core.artifacts.get(dashboardCaller(session), id);
    } catch (thrown) {
      return sendUserError(reply, session, '/dashboard/artifacts', 'Artifact', thrown);
    }
    return sendHtml(
      reply,
      200,
      confirmPage(session, '/dashboard/artifacts', {
        title: `Delete ${a.filename}?`,
        consequence: `${a.filename} (${formatBytes(a.size_bytes)}) disappears at once from every list, download, share link and page. Its bytes are removed for good 30 days later.`,
        action: `${artifactPath(a.artifact_id)}/delete`,
        button: 'Delete artifact',
        back: artifactPath(a.artifact_id),
      }),
    );
  });

  const act = (verb: 'publish' | 'unpublish' | 'delete') => async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { id } = request.params as { id: string };
    const caller = dashboardCaller(session);
    try {
      if (verb === 'publish') {
        const row = await core.deps.sharingStore.getPageForArtifact(session.tenant.id, id);
        await core.pages.publish(caller, id, publishBody(request.body, row), { keepPassword: true });
        return reply.redirect(`${artifactPath(id)}?done=published`, 303);
      }
      if (verb === 'unpublish') {
        await core.pages.unpublish(caller, id);
        return reply.redirect(`${artifactPath(id)}?done=unpublished`, 303);
      }
      await core.artifacts.softDelete(caller, id);
      return reply.redirect('/dashboard/artifacts?done=deleted', 303);
    } catch (thrown) {
      const err = userError(thrown);
      return detail(reply, session, id, notice('error', err.message), err.status);
    }
  };
  for (const verb of ['publish', 'unpublish', 'delete'] as const) {
    app.post(`/dashboard/artifacts/:id/${verb}`, { schema: { hide: true } }, act(verb));
  }
}
