import { toIso } from '../../core/time.js';
import type { ArtifactRow, PageRow } from '../../ports/metadata-store.js';
import { formatBytes } from '../../shared/units.js';
import { modelOf } from '../render/format.js';
import { html, type SafeHtml } from '../render/html.js';

/**
 * What a link preview (Slack, chat apps, social sites) shows of a page: Open Graph and Twitter card
 * tags built from the page's details, never from its bytes. A gated page, before and after unlock,
 * gets only the generic tags, so its title, filename and producer stay behind the password.
 */

const SITE = 'Cairn';
const GENERIC_DESCRIPTION = 'A page shared with Cairn.';

function tags(title: string, description: string, url?: string, image?: string): SafeHtml {
  return html`<meta property="og:site_name" content="${SITE}">
<meta property="og:type" content="website">
<meta property="og:title" content="${title}">
<meta property="og:description" content="${description}">
${url && html`<meta property="og:url" content="${url}">`}
${image && html`<meta property="og:image" content="${image}">`}
<meta name="twitter:card" content="${image ? 'summary_large_image' : 'summary'}">
<meta name="twitter:title" content="${title}">
<meta name="twitter:description" content="${description}">
${image && html`<meta name="twitter:image" content="${image}">`}
<meta name="description" content="${description}">`;
}

/** The tags of any viewer page that is not an open page: its heading and nothing else. */
export function genericShareTags(heading: string): SafeHtml {
  return tags(heading, GENERIC_DESCRIPTION);
}

/** "report.csv · 12 KB · by planner · claude-sonnet-4-5": the details a reader decides on. */
export function shareDescription(artifact: ArtifactRow): string {
  const parts = [artifact.filename, formatBytes(artifact.sizeBytes)];
  if (artifact.agentId) parts.push(`by ${artifact.agentId}`);
  const model = modelOf(artifact.metadata);
  if (model) parts.push(model);
  return parts.join(' · ');
}

/**
 * An open page's tags. `image` is the content URL of an image page, so a card can show the picture
 * itself (raster images only: SVG stays a download for anyone but a browser's `<img>`).
 */
export function openShareTags(page: PageRow, artifact: ArtifactRow, url: string, image?: string): SafeHtml {
  return tags(page.title ?? artifact.filename, shareDescription(artifact), url, image);
}

/** "2026-12-26 18:00 UTC" */
function readableTime(ms: number): string {
  return `${toIso(ms).slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * The share panel: the page's link in a read-only field, ready to select and copy (the shell runs
 * no script, so no button can write the clipboard), and when the page stops being available.
 */
export function sharePanel(url: string, artifact: ArtifactRow): SafeHtml {
  const expiry =
    artifact.expiresAt === null
      ? html`<p class="expiry" data-field="expires">This page does not expire; its owner can take it down at any time.</p>`
      : html`<p class="expiry" data-field="expires">Available until <time datetime="${toIso(artifact.expiresAt)}">${readableTime(artifact.expiresAt)}</time>.</p>`;
  return html`<section class="panel share" aria-labelledby="share-h">
<h2 id="share-h">Share</h2>
<label for="share-link">Link to this page</label>
<input id="share-link" class="share-link" type="url" readonly value="${url}" spellcheck="false">
${expiry}
</section>`;
}
