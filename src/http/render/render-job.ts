import { markdownDocument } from './markdown-document.js';
import { type PreviewInput, previewPage } from './preview/index.js';

/** A document the content origin renders from an artifact's bytes: a text preview or a Markdown page. */
export type RenderJob =
  | { kind: 'preview'; input: PreviewInput }
  /** `relativeBase`: see RenderEnv (markdown.ts). */
  | { kind: 'markdown'; source: string; title: string; relativeBase?: string };

/** The whole HTML document for `job` (what the render workers run). */
export function renderDocument(job: RenderJob): string {
  if (job.kind === 'markdown') {
    const options = job.relativeBase === undefined ? {} : { relativeBase: job.relativeBase };
    return markdownDocument(job.source, job.title, options).value;
  }
  // Bytes arrive as a Uint8Array from another thread; the renderers read a Buffer.
  const { bytes } = job.input;
  const input = { ...job.input, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  return previewPage(input).value;
}
