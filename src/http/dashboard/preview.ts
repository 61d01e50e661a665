import type { Readable } from 'node:stream';
import { blobKey } from '../../core/context.js';
import { chooseRenderer, essence } from '../../core/renderer.js';
import type { BlobStore } from '../../ports/blob-store.js';
import type { ArtifactRecord } from '../../wire/artifacts.js';
import { html, type SafeHtml, trustedHtml } from '../render/html.js';

/** How much of a text artifact the preview shows, and the largest image it inlines. */
export const TEXT_PREVIEW_BYTES = 8 * 1024;
export const IMAGE_PREVIEW_BYTES = 1024 * 1024;

/** Raster types only: an SVG can carry script, and a data: URL is no place to test that it cannot run. */
const IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif', 'image/apng']);
const TEXTS = new Set(['application/json', 'application/x-ndjson', 'application/xml', 'application/yaml']);

const isText = (a: ArtifactRecord, type: string) =>
  type.startsWith('text/') ||
  TEXTS.has(type) ||
  type.endsWith('+json') ||
  /\.(md|markdown|jsonl|ndjson)$/i.test(a.filename);

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * The start of a text artifact as its page would show it: Markdown rendered (sanitised, as on a
 * page), a transcript as its turns, anything else as escaped text. 8 KB render in well under a
 * millisecond, so this stays on the request.
 */
async function renderedText(a: ArtifactRecord, text: string): Promise<SafeHtml> {
  const kind = chooseRenderer(a.content_type, a.filename, false, { transcript: a.metadata?.type === 'transcript' });
  // The renderers (markdown-it) load on the first such preview, not with the API listener.
  if (kind === 'markdown') {
    const { renderMarkdown } = await import('../render/markdown.js');
    return html`<div class="preview md" data-preview="markdown">${trustedHtml(renderMarkdown(text))}</div>`;
  }
  if (kind === 'transcript') {
    const { renderTranscript } = await import('../render/preview/transcript.js');
    return html`<div class="preview" data-preview="transcript">${renderTranscript(text)}</div>`;
  }
  return html`<pre class="preview" data-preview="text">${text}</pre>`;
}

/**
 * A preview of the artifact inside the dashboard page, which runs no script and loads nothing
 * from elsewhere: the start of a text file as escaped text, a small raster image as a data: URL
 * (the CSP allows `img-src data:`), anything else a sentence.
 */
export async function previewPanel(blobs: BlobStore, tenantId: string, a: ArtifactRecord): Promise<SafeHtml> {
  const type = essence(a.content_type);
  const key = blobKey(tenantId, a.content_hash);
  let body: SafeHtml;
  if (a.size_bytes === 0) {
    body = html`<p class="muted">The file is empty.</p>`;
  } else if (isText(a, type)) {
    const end = Math.min(a.size_bytes, TEXT_PREVIEW_BYTES) - 1;
    const text = (await readAll(await blobs.read(key, { start: 0, end }))).toString('utf8');
    const more = a.size_bytes > TEXT_PREVIEW_BYTES;
    body = html`${await renderedText(a, text)}${more ? html`<p class="muted">The first 8 KB; download it for the rest.</p>` : ''}`;
  } else if (IMAGES.has(type) && a.size_bytes <= IMAGE_PREVIEW_BYTES) {
    const bytes = await readAll(await blobs.read(key));
    body = html`<img class="preview" data-preview="image" alt="${a.filename}" src="data:${type};base64,${bytes.toString('base64')}">`;
  } else {
    body = html`<p class="muted" data-preview="none">No preview for ${type}${IMAGES.has(type) ? ' images over 1 MB' : ''}: download it to see it.</p>`;
  }
  return html`<section class="panel pad"><h2>Preview</h2>${body}</section>`;
}
