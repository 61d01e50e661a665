import { REPORT_REASONS } from '../../core/pages.js';
import { essence, type RendererKind } from '../../core/renderer.js';
import { toIso } from '../../core/time.js';
import type { ArtifactRow, PageRow } from '../../ports/metadata-store.js';
import { formatBytes } from '../../shared/units.js';
import { modelOf } from '../render/format.js';
import { type HtmlValue, html, type SafeHtml } from '../render/html.js';
import { pageFrame } from '../render/page-frame.js';
import { PREVIEW_SHELL_CSS } from './preview-styles.js';
import { genericShareTags, openShareTags, sharePanel } from './share.js';
import { SHELL_CSS } from './styles.js';

/** The HTML of the viewer origin. Every interpolated value goes through `html`, which escapes it. */

/** `head` carries the page's link-preview tags; any other page gets only its heading in them. */
export function layout(title: string, body: HtmlValue, head: HtmlValue = genericShareTags(title)): SafeHtml {
  return pageFrame({ title, head, css: SHELL_CSS + PREVIEW_SHELL_CSS, body });
}

export const topbar = (heading: HtmlValue, action?: HtmlValue) =>
  html`<header class="topbar"><span class="brand">Cairn</span><h1>${heading}</h1>${action}</header>`;

export const footer = html`<footer>Shared with Cairn. This content was published by a user and is not reviewed.</footer>`;

function receipt(artifact: ArtifactRow): SafeHtml {
  const row = (field: string, value: string | null, cls = '', inner?: SafeHtml) =>
    value !== null &&
    value !== '' &&
    html`<div data-field="${field}"><dt>${field}</dt><dd class="${cls}">${inner ?? value}</dd></div>`;
  const generated = toIso(artifact.createdAt);
  return html`<section class="panel receipt" aria-labelledby="receipt-h">
<h2 id="receipt-h">Provenance receipt</h2>
<dl>
${row('agent_id', artifact.agentId)}
${row('model', modelOf(artifact.metadata))}
${row('content_hash', artifact.contentHash, 'hash')}
${row('generated_at', generated, '', html`<time datetime="${generated}">${generated}</time>`)}
</dl>
<p class="note">A claim made by the producer, not a cryptographic attestation.</p>
</section>`;
}

function reportForm(slug: string): SafeHtml {
  return html`<details class="panel report">
<summary>Report this page</summary>
<form method="post" action="/a/${encodeURIComponent(slug)}/report">
<label for="reason">Reason</label>
<select id="reason" name="reason">${REPORT_REASONS.map((r) => html`<option value="${r}">${r[0]?.toUpperCase()}${r.slice(1)}</option>`)}</select>
<label for="detail">Details (optional)</label>
<textarea id="detail" name="detail" maxlength="2000" placeholder="What is wrong with this page?"></textarea>
<button class="btn secondary" type="submit">Send report</button>
</form>
</details>`;
}

export interface ShellInput {
  page: PageRow;
  artifact: ArtifactRow;
  kind: RendererKind;
  contentOrigin: string;
  /** The page's public URL (`{viewer}/a/<slug>`), for the share panel and link previews. */
  publicUrl: string;
  /** Content token of an unlocked password page. */
  token?: string;
}

function contentUrl(input: ShellInput, download: boolean): string {
  const params = new URLSearchParams();
  if (download) params.set('download', '1');
  if (input.token) params.set('token', input.token);
  const query = params.toString();
  return `${input.contentOrigin}/c/${encodeURIComponent(input.page.slug)}${query ? `?${query}` : ''}`;
}

function rendererArea(input: ShellInput, title: string): SafeHtml {
  const { artifact } = input;
  const src = contentUrl(input, false);
  switch (input.kind) {
    case 'html':
      // Scripts run, but never with the content origin's (or anyone's) same-origin rights.
      return html`<iframe class="panel frame" src="${src}" sandbox="allow-scripts" referrerpolicy="no-referrer" title="${title}"></iframe>`;
    case 'markdown':
      // No scripts; popups only so an https link the reader clicks can open in a new tab.
      return html`<iframe class="panel frame markdown-frame" src="${src}" sandbox="allow-popups allow-popups-to-escape-sandbox" referrerpolicy="no-referrer" title="${title}"></iframe>`;
    case 'text':
    case 'code':
    case 'json':
    case 'csv':
    case 'transcript':
      // Our own document of escaped text: it needs no permission at all.
      return html`<iframe class="panel frame preview-frame preview-${input.kind}" src="${src}" sandbox="" referrerpolicy="no-referrer" title="${title}"></iframe>`;
    case 'image':
      return html`<figure class="panel image"><img src="${src}" alt="${title}" referrerpolicy="no-referrer"></figure>`;
    default:
      return html`<div class="panel card download-card">
<p class="name">${artifact.filename}</p>
<p class="meta"><span class="type">${artifact.contentType}</span> · <span class="size">${formatBytes(artifact.sizeBytes)}</span></p>
<a class="btn" href="${contentUrl(input, true)}" rel="noreferrer">Download</a>
</div>`;
  }
}

/** The page shell: title, the renderer, the provenance receipt, the share panel, download and report. */
export function shellPage(input: ShellInput): SafeHtml {
  const { page, artifact } = input;
  const title = page.title ?? artifact.filename;
  const download = html`<a class="btn" href="${contentUrl(input, true)}" rel="noreferrer" data-action="download">Download</a>`;
  const framed = input.kind !== 'image' && input.kind !== 'download';
  const raster = input.kind === 'image' && essence(artifact.contentType) !== 'image/svg+xml';
  // A gated page's tags say nothing of it, also once unlocked.
  const head = input.token
    ? genericShareTags('Protected page')
    : openShareTags(page, artifact, input.publicUrl, raster ? contentUrl(input, false) : undefined);
  return layout(
    title,
    html`${topbar(title, download)}
<main class="layout renderer-${input.kind}${framed ? ' framed' : ''}">
<section class="content">${rendererArea(input, title)}</section>
<details class="side about"><summary>Details, share and report</summary>${receipt(artifact)}${sharePanel(input.publicUrl, artifact)}${reportForm(page.slug)}</details>
</main>
${footer}`,
    head,
  );
}

/** The password form of a gated page; it shows nothing of the page before unlock. */
export function passwordPage(slug: string, error?: string): SafeHtml {
  return layout(
    'Protected page',
    html`${topbar('Protected page')}
<main class="center"><div class="panel">
<h1>This page is password-protected</h1>
<p>Enter the password you were given to view it.</p>
${error && html`<p class="error" role="alert">${error}</p>`}
<form method="post" action="/a/${encodeURIComponent(slug)}/unlock">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<button class="btn" type="submit">Unlock</button>
</form>
</div></main>
${footer}`,
  );
}

/** One page for every slug we will not show: it must not differ between the reasons. */
export const NOT_FOUND_HTML = layout(
  'Page not found',
  html`${topbar('Page not found')}
<main class="center"><div class="panel">
<h1>Page not found</h1>
<p>This page does not exist or is no longer available.</p>
</div></main>
${footer}`,
).value;

/**
 * What a browser gets for a share link or signed download URL that no longer works (revoked,
 * expired, never existed, the file gone): one page for every reason, as the API gives one code.
 */
export const LINK_GONE_HTML = layout(
  'Link not available',
  html`${topbar('Link not available')}
<main class="center"><div class="panel">
<h1>This link does not work any more</h1>
<p>It was revoked or has expired, or the file it pointed to is gone. Ask whoever shared it for a new link.</p>
</div></main>
${footer}`,
).value;

export function messagePage(heading: string, message: string, tone: 'success' | 'error', backTo?: string): SafeHtml {
  return layout(
    heading,
    html`${topbar(heading)}
<main class="center"><div class="panel">
<h1 class="${tone}">${heading}</h1>
<p>${message}</p>
${backTo && html`<a class="btn secondary" href="${backTo}">Back to the page</a>`}
</div></main>
${footer}`,
  );
}
