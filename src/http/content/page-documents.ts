import type { ArtifactRow } from '../../ports/metadata-store.js';
import { html } from '../render/html.js';
import { previewDocument } from '../render/preview/document.js';
import type { RenderJob } from '../render/render-job.js';
import { type RenderOutcome, RenderPool } from '../render/render-pool.js';

/** Documents kept in memory, at most about this many characters in all (the oldest go first). */
export const KEPT_DOCUMENTS_MAX_CHARS = 64 * 1024 * 1024;

export interface PageDocument {
  doc: string;
  /** 200, or 503 when too many renders were waiting (that answer is not kept). */
  status: 200 | 503;
}

/** Every input of a page's render; the tenant too, so no tenant can tell another's bytes were viewed. */
export function documentKey(kind: string, artifact: ArtifactRow, title: string): string {
  const { tenantId, contentHash, sizeBytes, filename, contentType } = artifact;
  return JSON.stringify([kind, tenantId, contentHash, sizeBytes, filename, contentType, title]);
}

/**
 * The documents the content origin renders from artifacts (text previews, Markdown pages), each
 * rendered once and kept: an artifact's bytes never change, so a later view of the same page is a
 * read from memory, not another render. Renders run on the RenderPool's worker threads; views of
 * one page that arrive while it renders share that render.
 */
export class PageDocuments {
  private readonly kept = new Map<string, string>();
  private keptChars = 0;
  private readonly rendering = new Map<string, Promise<PageDocument>>();

  constructor(
    private readonly pool = new RenderPool(),
    private readonly maxChars = KEPT_DOCUMENTS_MAX_CHARS,
  ) {}

  /**
   * The document for `key` (every input of the render: the artifact's tenant, content hash, name,
   * type and the page's title), kept, or rendered from the job `prepare` reads (only then are the
   * artifact's bytes read).
   */
  async get(key: string, title: string, prepare: () => Promise<RenderJob>): Promise<PageDocument> {
    const kept = this.kept.get(key);
    if (kept !== undefined) {
      // Most recently used last: the first in the map is the first to go.
      this.kept.delete(key);
      this.kept.set(key, kept);
      return { doc: kept, status: 200 };
    }
    const running = this.rendering.get(key);
    if (running) return running;
    const render = (async () => {
      try {
        const document = settle(await this.pool.render(await prepare()), title);
        if (document.status === 200) this.keep(key, document.doc);
        return document;
      } finally {
        this.rendering.delete(key);
      }
    })();
    this.rendering.set(key, render);
    return render;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  private keep(key: string, doc: string): void {
    if (doc.length > this.maxChars) return;
    this.kept.set(key, doc);
    this.keptChars += doc.length;
    for (const [oldest, old] of this.kept) {
      if (this.keptChars <= this.maxChars) break;
      this.kept.delete(oldest);
      this.keptChars -= old.length;
    }
  }
}

/**
 * The document of an outcome. A render that ran past its time limit would do so again (the bytes
 * are the same), so its answer is kept like any other: a card pointing to the download.
 */
function settle(outcome: RenderOutcome, title: string): PageDocument {
  if ('doc' in outcome) return { doc: outcome.doc, status: 200 };
  const [status, text]: [200 | 503, string] =
    outcome.refused === 'busy'
      ? [503, 'Too many previews are being prepared right now. Reload this page in a moment, or download the file.']
      : [200, 'This file takes too long to preview. Download it to see it.'];
  return {
    doc: previewDocument(title, html`<p class="note" role="note" data-preview-unavailable>${text}</p>`).value,
    status,
  };
}
