import type { FastifyInstance } from 'fastify';
import type { RawQuery } from '../../core/list-query.js';
import { html, type SafeHtml } from '../render/html.js';
import { type DashboardContext, dashboardCaller, sendUserError } from './context.js';

/**
 * "Download all" of the Artifacts list: `/dashboard/archive?<the list's filters>&format=` answers
 * 303 to the signed archive URL of those filters (of the session, when the session is the only
 * filter), so the browser downloads it from the content origin like every other byte.
 */
export function archiveRoutes(
  app: FastifyInstance,
  ctx: DashboardContext,
  listQuery: (form: Record<string, string | undefined>) => RawQuery,
): void {
  const { core } = ctx;
  app.get('/dashboard/archive', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const form = request.query as Record<string, string | undefined>;
    const { cursor: _cursor, ...filters } = listQuery(form);
    const format = form.format === 'tar.gz' ? 'tar.gz' : 'zip';
    const caller = dashboardCaller(session);
    try {
      const only = Object.keys(filters);
      const archive =
        only.length === 1 && typeof filters.session_id === 'string'
          ? await core.archives.sessionArchiveUrl(caller, filters.session_id, { format })
          : await core.archives.listArchiveUrl(caller, { ...filters, format });
      return reply.redirect(archive.archive_url, 303);
    } catch (thrown) {
      return sendUserError(reply, session, '/dashboard/artifacts', 'Download all', thrown);
    }
  });
}

/** The buttons above a filtered list: its archive as zip or tar.gz. */
export function downloadAllButtons(form: Record<string, string | undefined>): SafeHtml {
  const params = new URLSearchParams(
    Object.entries(form).filter((e): e is [string, string] => !!e[1] && e[0] !== 'cursor' && e[0] !== 'done'),
  );
  const zip = `/dashboard/archive?${params.toString()}`;
  params.set('format', 'tar.gz');
  return html`<p class="download-all"><a class="btn small" data-action="download-all" href="${zip}">Download all (.zip)</a> <a class="btn secondary small" href="/dashboard/archive?${params.toString()}">.tar.gz</a></p>`;
}
