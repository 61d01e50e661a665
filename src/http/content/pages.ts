import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { blobKey } from '../../core/context.js';
import type { Core } from '../../core/index.js';
import type { LivePage } from '../../core/pages.js';
import { publicPageUrl } from '../../core/records.js';
import { essence } from '../../core/renderer.js';
import { html } from '../render/html.js';
import { pageRenderer } from '../render/page-kind.js';
import { documentKey, type PageDocuments } from './page-documents.js';
import { servePreview } from './preview.js';
import { sendRenderedDocument } from './send-document.js';
import { serveArtifactBytes } from './serve-bytes.js';

/**
 * `{content}/c/<slug>`: the bytes behind a public page, the only place they are ever served from.
 * Each renderer gets its own Content-Security-Policy; all of them sandbox the document, so even
 * when opened directly (not in the viewer's iframe) it runs with an opaque origin.
 */

const HTML_PAGE_SOURCES =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; media-src data: blob:; " +
  "form-action 'none'; base-uri 'none'";

/**
 * HTML pages in the viewer's frame: their own inline scripts run, but they can load or connect to
 * nothing, and the frame's sandbox keeps them from moving the tab.
 */
export function htmlPageCsp(viewerOrigin: string): string {
  return `sandbox allow-scripts; script-src 'unsafe-inline'; ${HTML_PAGE_SOURCES}; frame-ancestors ${viewerOrigin}`;
}

/**
 * HTML pages fetched as anything but a frame, by a client that does not say what it fetches for
 * (`Sec-Fetch-Dest`): the bytes, inert. A script of a top-level document is not bound by a
 * frame's sandbox (it may navigate its own tab), so no script runs there at all.
 */
export function inertHtmlCsp(viewerOrigin: string): string {
  return `sandbox; script-src 'none'; ${HTML_PAGE_SOURCES}; frame-ancestors ${viewerOrigin}`;
}

/** What a request for an HTML page's bytes is for: the viewer's frame, a tab of its own, or else. */
function htmlDestination(request: FastifyRequest): 'frame' | 'document' | 'other' {
  const dest = request.headers['sec-fetch-dest'];
  if (dest === 'iframe' || dest === 'frame') return 'frame';
  return dest === 'document' ? 'document' : 'other';
}

/**
 * Markdown pages: no scripts at all. Popups are allowed (and escape the sandbox) only so that a
 * reader's click on an https link opens it in a new tab; the sanitizer adds rel=noopener.
 */
export function markdownPageCsp(viewerOrigin: string, contentOrigin: string): string {
  // The content origin itself for the images stored beside the page (besidePath).
  return (
    `default-src 'none'; img-src ${contentOrigin} https: data:; style-src 'unsafe-inline'; form-action 'none'; ` +
    `base-uri 'none'; sandbox allow-popups allow-popups-to-escape-sandbox; frame-ancestors ${viewerOrigin}`
  );
}

/**
 * Where a page's document points a relative reference (`chart.png`): `/c/<slug>/f/<name>`, on the
 * content origin. Only open pages of a session have them (PageService.besidePage).
 */
function besideBase(live: LivePage): string | undefined {
  if (live.page.access === 'password' || live.artifact.sessionId === null) return undefined;
  return `/c/${live.page.slug}/f/`;
}

/** Images are shown inline (inert, as on an image page); everything else is a download. */
const INLINE_BESIDE = /^image\/(png|jpeg|gif|webp|avif|svg\+xml)$/;

/** Images (an SVG opened directly included): nothing runs, nothing loads, nothing frames them. */
export const IMAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox; frame-ancestors 'none'";

const NOT_FOUND_PAGE = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex, nofollow"><title>Not found</title></head>
<body><p>This page is not available.</p></body></html>
`.value;

/**
 * One answer for every "no": unknown, unpublished, expired, suspended, malformed, bad token, and
 * any other path under /c/. The viewer may frame it (a page can go away under an open shell).
 */
export function pageNotFound(reply: FastifyReply, viewerOrigin: string): FastifyReply {
  return reply
    .status(404)
    .header('Content-Type', 'text/html; charset=utf-8')
    .header('Content-Security-Policy', `default-src 'none'; sandbox; frame-ancestors ${viewerOrigin}`)
    .header('Cache-Control', 'no-store')
    .header('Referrer-Policy', 'no-referrer')
    .send(NOT_FOUND_PAGE);
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function serveMarkdown(
  core: Core,
  documents: PageDocuments,
  reply: FastifyReply,
  live: LivePage,
  headers: Record<string, string>,
) {
  const { doc, status } = await markdownPage(core, documents, live);
  const { viewer, content } = core.deps.origins;
  return sendRenderedDocument(reply, live.artifact, markdownPageCsp(viewer, content), headers, doc, status);
}

async function markdownPage(core: Core, documents: PageDocuments, live: LivePage) {
  const { artifact, page } = live;
  const title = page.title ?? artifact.filename;
  const relativeBase = besideBase(live);
  const key = `${documentKey('markdown', artifact, title)}${relativeBase ?? ''}`;
  return documents.get(key, title, async () => {
    const bytes =
      artifact.sizeBytes === 0
        ? Buffer.alloc(0)
        : await readAll(await core.deps.blobs.read(blobKey(artifact.tenantId, artifact.contentHash)));
    return { kind: 'markdown', source: bytes.toString('utf8'), title, ...(relativeBase ? { relativeBase } : {}) };
  });
}

/**
 * `{content}/c/<slug>/f/<name>`: an artifact a Markdown page refers to by a relative reference.
 * Reachable only when the page's own rendered document points there (so only what its owner
 * published, never a guessed name), and only an artifact of the page's tenant and session.
 */
async function serveBeside(
  core: Core,
  documents: PageDocuments,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const { slug, name } = request.params as { slug: string; name: string };
  const { viewer } = core.deps.origins;
  const live = await core.pages.resolve(slug);
  const base = live ? besideBase(live) : undefined;
  if (!live || !base || pageRenderer(live.artifact, false) !== 'markdown') return pageNotFound(reply, viewer);
  const { doc, status } = await markdownPage(core, documents, live);
  const reference = `="${base}${encodeURIComponent(name)}"`;
  if (status !== 200 || !doc.includes(reference)) return pageNotFound(reply, viewer);
  const found = await core.pages.besidePage(live, name);
  if (!found) return pageNotFound(reply, viewer);
  const inline = INLINE_BESIDE.test(essence(found.contentType));
  return serveArtifactBytes(request, reply, core.deps.blobs, found, {
    disposition: inline ? 'inline' : 'attachment',
    headers: { 'Referrer-Policy': 'no-referrer', ...(inline ? { 'Content-Security-Policy': IMAGE_CSP } : {}) },
  });
}

export function contentPageRoutes(app: FastifyInstance, core: Core, documents: PageDocuments): void {
  app.route({
    method: ['GET', 'HEAD'],
    url: '/c/:slug/f/:name',
    handler: (request, reply) => serveBeside(core, documents, request, reply),
  });
  // GET and HEAD explicitly: Fastify's automatic HEAD route would reset Content-Length to 0.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/c/:slug',
    handler: async (request, reply) => {
      const { slug } = request.params as { slug: string };
      const { token, download } = request.query as Record<string, unknown>;
      const live = await core.pages.resolve(slug);
      if (!live) return pageNotFound(reply, core.deps.origins.viewer);
      const gated = live.page.access === 'password';
      if (gated && (typeof token !== 'string' || !core.pages.acceptsContentToken(live.page, token))) {
        return pageNotFound(reply, core.deps.origins.viewer);
      }
      // The token is in this URL: no Referer may carry it on, and no cache may keep gated bytes.
      const headers: Record<string, string> = { 'Referrer-Policy': 'no-referrer' };
      if (gated) headers['Cache-Control'] = 'private, no-store';
      const { artifact } = live;
      const kind = download === '1' ? 'download' : pageRenderer(artifact, gated);
      const { blobs, origins } = core.deps;
      switch (kind) {
        case 'html': {
          // The answer depends on Sec-Fetch-Dest, so no cache may give one in place of another.
          reply.header('Vary', 'Sec-Fetch-Dest');
          const dest = htmlDestination(request);
          // Opened as a page of its own (a link, a typed URL): the viewer page, whose frame runs
          // it sandboxed, so a page can never be a redirect hop on the content host.
          if (dest === 'document') return reply.redirect(publicPageUrl(origins, slug), 303);
          const csp = dest === 'frame' ? htmlPageCsp(origins.viewer) : inertHtmlCsp(origins.viewer);
          return serveArtifactBytes(request, reply, blobs, artifact, {
            disposition: 'inline',
            headers: { ...headers, 'Content-Security-Policy': csp },
          });
        }
        case 'image':
          return serveArtifactBytes(request, reply, blobs, artifact, {
            disposition: 'inline',
            headers: { ...headers, 'Content-Security-Policy': IMAGE_CSP },
          });
        case 'markdown':
          return serveMarkdown(core, documents, reply, live, headers);
        case 'text':
        case 'code':
        case 'json':
        case 'csv':
        case 'transcript':
          return servePreview(core, documents, reply, live, kind, headers);
        default:
          return serveArtifactBytes(request, reply, blobs, artifact, { headers });
      }
    },
  });
}
