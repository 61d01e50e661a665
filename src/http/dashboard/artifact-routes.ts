import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserSession } from '../../core/accounts/index.js';
import type { RawQuery } from '../../core/list-query.js';
import { html, type SafeHtml } from '../render/html.js';
import { formatBytes } from '../viewer/templates.js';
import { type DashboardContext, dashboardCaller, userError } from './context.js';
import { csrfField, dashboardPage, notice, sendHtml } from './layout.js';
import { pagePanel, publishBody } from './page-form.js';

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

const artifactPath = (id: string) => `/dashboard/artifacts/${encodeURIComponent(id)}`;

/** Artifacts: the API's list with its filters, one artifact's record, publish/unpublish and delete. */
export function artifactRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { core } = ctx;

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
          : html`<table><thead><tr><th>Filename</th><th>Type</th><th>Size</th><th>Created</th><th>Session</th></tr></thead><tbody>
${page.artifacts.map((a) => html`<tr data-artifact="${a.artifact_id}"><td><a href="${artifactPath(a.artifact_id)}">${a.filename}</a></td><td class="mono">${a.content_type}</td><td>${formatBytes(a.size_bytes)}</td><td>${a.created_at}</td><td class="mono">${a.session_id ?? ''}</td></tr>`)}
</tbody></table>`
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
      const err = userError(thrown);
      return sendHtml(
        reply,
        err.status,
        dashboardPage(session, '/dashboard/artifacts', 'Artifact', notice('error', err.message)),
      );
    }
    const pageRow = await core.deps.store.getPageForArtifact(session.tenant.id, a.artifact_id);
    const action = (verb: string, label: string, cls = 'btn small') =>
      html`<form method="post" action="${artifactPath(a.artifact_id)}/${verb}">${csrfField(session.csrf)}<button class="${cls}" type="submit">${label}</button></form>`;
    const rows: [string, string][] = [
      ['artifact_id', a.artifact_id],
      ['content_type', a.content_type],
      ['size', formatBytes(a.size_bytes)],
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
<section class="panel pad"><table><tbody>${rows.map(([k, v]) => html`<tr><th scope="row" class="mono">${k}</th><td class="mono" data-field="${k}">${v}</td></tr>`)}</tbody></table></section>
${pagePanel(session, a, pageRow, `${artifactPath(a.artifact_id)}/publish`, a.page ? action('unpublish', 'Unpublish', 'btn secondary small') : '')}
<section class="panel pad"><h2>Delete</h2><p>Deleting takes the artifact out of every list, download, link and page at once.</p>${action('delete', 'Delete artifact', 'btn danger small')}</section>`,
    );
  };

  const act = (verb: 'publish' | 'unpublish' | 'delete') => async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { id } = request.params as { id: string };
    const caller = dashboardCaller(session);
    try {
      if (verb === 'publish') {
        const row = await core.deps.store.getPageForArtifact(session.tenant.id, id);
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
