import { codeLanguage, essence, extensionOf, type RendererKind } from '../../../core/renderer.js';
import type { SafeHtml } from '../html.js';
import { OutputBudget, PREVIEW_MAX_BYTES } from './budget.js';
import { renderCode } from './code.js';
import { parseDelimited, renderTableWithin, tableNote } from './csv.js';
import { previewDocument } from './document.js';
import { FOLD_MAX_BYTES, parseJson, renderJsonWithin, stringifyBounded } from './json.js';
import { renderText } from './text.js';
import { renderTranscript } from './transcript.js';

export { PREVIEW_MAX_BYTES } from './budget.js';

export interface PreviewInput {
  kind: RendererKind;
  title: string;
  filename: string;
  contentType: string;
  /** The first bytes of the file, at most PREVIEW_MAX_BYTES. */
  bytes: Buffer;
  /** The file's full size. */
  sizeBytes: number;
}

/** UTF-8 text of a prefix, without the replacement character a cut multi-byte sequence would leave. */
export function decodePrefix(bytes: Buffer, truncated: boolean): string {
  let end = bytes.length;
  if (truncated) {
    // Step back over at most 3 continuation bytes to the start of the last sequence, and drop it
    // when it is incomplete.
    let i = end - 1;
    while (i >= 0 && end - i <= 4 && ((bytes[i] as number) & 0xc0) === 0x80) i--;
    if (i >= 0) {
      const lead = bytes[i] as number;
      const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
      if (end - i < need) end = i;
    }
  }
  return bytes.subarray(0, end).toString('utf8');
}

function formatSize(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(n / 1024)} KB`;
}

/** The complete HTML document for a preview page: its markup bounded (budget.ts), however hostile the file. */
export function previewPage(input: PreviewInput): SafeHtml {
  const truncated = input.sizeBytes > input.bytes.length;
  const text = decodePrefix(input.bytes, truncated);
  const cut = truncated
    ? `This preview shows the first ${formatSize(input.bytes.length)} of ${formatSize(input.sizeBytes)}; the rest is in the download.`
    : null;
  const budget = new OutputBudget();
  let body: SafeHtml;
  let note = cut;
  switch (input.kind) {
    case 'code':
      body = renderCode(text, codeLanguage(input.filename) ?? '', budget);
      break;
    case 'json': {
      const parsed = truncated ? undefined : parseJson(text);
      // Folded when that fits the preview whole; else indented text, which can stop part way.
      const folded =
        parsed && input.bytes.length <= FOLD_MAX_BYTES ? renderJsonWithin(parsed.value, budget.bytesLeft) : null;
      const fits = folded !== null && budget.takeWhole(folded.value);
      const pretty = parsed && !fits ? stringifyBounded(parsed.value, 2) : undefined;
      if (folded && fits) body = folded;
      else if (pretty !== undefined) {
        // Indenting can make the text several times longer: it is held to the preview size too.
        const shown =
          pretty.length > PREVIEW_MAX_BYTES ? pretty.slice(0, pretty.lastIndexOf('\n', PREVIEW_MAX_BYTES)) : pretty;
        body = renderText(shown, budget);
        note =
          shown === pretty
            ? 'This JSON is large: it is shown pretty-printed, without folding.'
            : 'This JSON is large: the start of it is shown pretty-printed, without folding; all of it is in the download.';
      } else {
        body = renderText(text, budget);
        note = cut ?? (parsed ? null : 'This file is not valid JSON; it is shown as text.');
      }
      break;
    }
    case 'csv': {
      const tsv = essence(input.contentType) === 'text/tab-separated-values' || extensionOf(input.filename) === 'tsv';
      const table = parseDelimited(text, tsv ? '\t' : ',');
      const { html, shown } = renderTableWithin(table, budget);
      body = html;
      note = tableNote(table, truncated, shown) ?? cut;
      break;
    }
    case 'transcript':
      body = renderTranscript(text, budget);
      break;
    default:
      body = renderText(text, budget);
  }
  return previewDocument(input.title, body, note, budget.full);
}
