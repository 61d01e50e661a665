import { chooseRenderer, type RendererKind } from '../../core/renderer.js';
import type { ArtifactRow } from '../../ports/metadata-store.js';

/**
 * Markdown is rendered in memory on every view; beyond this size a page shows the download card
 * instead, so one large file cannot tie up the content origin.
 */
export const MARKDOWN_RENDER_MAX_BYTES = 2 * 1024 * 1024;

/** The renderer both origins use for a page, so the viewer shell and the content origin agree. */
export function pageRenderer(artifact: ArtifactRow, gated: boolean): RendererKind {
  const transcript = artifact.metadata.type === 'transcript';
  const kind = chooseRenderer(artifact.contentType, artifact.filename, gated, { transcript });
  return kind === 'markdown' && artifact.sizeBytes > MARKDOWN_RENDER_MAX_BYTES ? 'download' : kind;
}
