/**
 * Which renderer a page uses (the spec's Page renderers table). Chosen from the stored MIME type;
 * open pages also render `.md`/`.markdown` filenames as Markdown whatever their stored type, but a
 * gated page (after unlock) uses the stored type only, so a password page can never be turned into
 * a different renderer by its filename.
 */
export type RendererKind = 'html' | 'markdown' | 'image' | 'download';

/** The media type without parameters, lower-cased: `Text/HTML; charset=utf-8` → `text/html`. */
export function essence(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

/** HTML for the password rule: `text/html` and `application/xhtml+xml` can never be gated. */
export function isHtmlType(contentType: string): boolean {
  const t = essence(contentType);
  return t === 'text/html' || t === 'application/xhtml+xml';
}

export function chooseRenderer(contentType: string, filename: string, gated: boolean): RendererKind {
  // "Whatever the stored type": on an open page the filename wins, even over text/html.
  if (!gated && /\.(md|markdown)$/i.test(filename)) return 'markdown';
  const t = essence(contentType);
  if (t === 'text/html') return 'html';
  if (t === 'text/markdown' || t === 'text/x-markdown') return 'markdown';
  if (t.startsWith('image/')) return 'image';
  // application/xhtml+xml included: it counts as HTML for passwords but renders as a download card.
  return 'download';
}
