import type { FastifyInstance } from 'fastify';
import { sessionScope } from '../../core/archives.js';
import { isCairnError } from '../../core/errors.js';
import type { Core } from '../../core/index.js';
import { toIso } from '../../core/time.js';
import { formatBytes } from '../../shared/units.js';
import { html } from '../render/html.js';
import { sendNotFound, sendPage } from './pages.js';
import { footer, layout, messagePage, topbar } from './templates.js';

/** Rows the page lists; the archive holds them all (up to 10,000), the page shows the first ones. */
const SHOWN_FILES = 500;

/**
 * `{viewer}/s/lnk_<id>`: the page of a session link. It lists the session's files with their
 * sizes (names as the archive has them, escaped), and "download all" points at the archive on the
 * download origin; this origin sends no stored byte. Unknown, revoked and expired links, and a
 * suspended tenant's, get the viewer's one 404 page.
 */
export function sessionLinkRoutes(app: FastifyInstance, core: Core): void {
  app.get('/s/:linkId', async (request, reply) => {
    const { linkId } = request.params as { linkId: string };
    const found = await core.sharing.resolveSessionLink(linkId);
    if (!found) return sendNotFound(core, reply);
    const { link, tenant } = found;
    let plan: Awaited<ReturnType<typeof core.archives.plan>>;
    try {
      plan = await core.archives.plan(tenant, 'zip', sessionScope(link.sessionId));
    } catch (err) {
      if (!isCairnError(err)) throw err;
      return sendPage(core, reply, 200, messagePage('Too large to list', err.message, 'error'));
    }
    const archive = `${core.deps.origins.download}/${link.id}`;
    const heading = `Session ${link.sessionId}`;
    const rows = plan.entries.slice(0, SHOWN_FILES);
    const page = layout(
      heading,
      html`${topbar(heading)}
<main class="center"><div class="panel session-link">
<p class="meta"><span data-field="count">${plan.entries.length} ${plan.entries.length === 1 ? 'file' : 'files'}</span> · <span data-field="size">${formatBytes(plan.totalBytes)}</span> · available until <time datetime="${toIso(link.expiresAt)}">${toIso(link.expiresAt).slice(0, 16).replace('T', ' ')} UTC</time></p>
<p><a class="btn" data-action="download-all" href="${archive}" rel="noreferrer">Download all (.zip)</a>
<a class="btn secondary" data-action="download-tar" href="${archive}?format=tar.gz" rel="noreferrer">.tar.gz</a></p>
<table class="files">
<thead><tr><th scope="col">File</th><th scope="col">Size</th></tr></thead>
<tbody>${rows.map((e) => html`<tr><td class="name">${e.name}</td><td class="size">${formatBytes(e.artifact.sizeBytes)}</td></tr>`)}</tbody>
</table>
${plan.entries.length > rows.length && html`<p class="note">And ${plan.entries.length - rows.length} more, all in the archive.</p>`}
<p class="note">The archive's manifest.json lists each file's SHA-256.</p>
</div></main>
${footer}`,
    );
    return sendPage(core, reply, 200, page);
  });
}
