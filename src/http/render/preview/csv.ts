import { formatCount } from '../../../shared/units.js';
import { escapeHtml, type SafeHtml, trustedHtml } from '../html.js';
import { clip, OutputBudget } from './budget.js';

/** Rows shown in the table; the rest are counted, not kept. */
export const CSV_MAX_ROWS = 1_000;
/** Columns shown; a hostile line of a million delimiters is not a million cells. */
export const CSV_MAX_COLUMNS = 200;
/** Characters of one cell shown, so that a row of 200 columns fits a preview whatever its cells hold. */
export const CSV_CELL_MAX_CHARS = 2 * 1024;

export interface CsvPreview {
  header: string[];
  rows: string[][];
  /** Data rows after the header, in the text read (shown or not). */
  total: number;
}

/**
 * RFC 4180 reading (quoted fields with doubled quotes, line breaks inside quotes, CRLF or LF),
 * with `,` or a tab as delimiter. Keeps the header and the first `maxRows` data rows; later rows
 * are only counted, so memory stays bounded by what is shown.
 */
export function parseDelimited(text: string, delimiter: string, maxRows = CSV_MAX_ROWS): CsvPreview {
  const source = text.replace(/^\ufeff/, '');
  let header: string[] | null = null;
  const rows: string[][] = [];
  let total = 0;
  let row: string[] = [];
  let field = '';
  let keep = true;
  let quoted = false;
  let rowHasContent = false;
  const endField = () => {
    if (keep) row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    if (rowHasContent || row.length > 1) {
      if (header === null) header = row;
      else {
        total++;
        if (rows.length < maxRows) rows.push(row);
      }
    }
    row = [];
    rowHasContent = false;
    keep = header === null || rows.length < maxRows;
  };
  for (let i = 0; i < source.length; i++) {
    const ch = source[i] as string;
    if (quoted) {
      if (ch === '"') {
        if (source[i + 1] === '"') {
          if (keep) field += '"';
          i++;
        } else quoted = false;
      } else if (keep) field += ch;
      continue;
    }
    if (ch === '"') {
      quoted = true;
      rowHasContent = true;
    } else if (ch === delimiter) {
      rowHasContent = true;
      endField();
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && source[i + 1] === '\n') i++;
      endRow();
    } else {
      rowHasContent = true;
      if (keep) field += ch;
    }
  }
  if (field !== '' || row.length > 0 || rowHasContent) endRow();
  return { header: header ?? [], rows, total };
}

export function renderTable(preview: CsvPreview): SafeHtml {
  return renderTableWithin(preview, new OutputBudget()).html;
}

/** The table, with as many of its rows as `budget` takes (the header always), and how many that is. */
export function renderTableWithin(preview: CsvPreview, budget: OutputBudget): { html: SafeHtml; shown: number } {
  const width = Math.min(
    CSV_MAX_COLUMNS,
    preview.rows.reduce((w, r) => Math.max(w, r.length), preview.header.length),
  );
  const cells = (r: string[], tag: 'th' | 'td') =>
    Array.from(
      { length: width },
      (_, i) => `<${tag}>${escapeHtml(clip(r[i] ?? '', CSV_CELL_MAX_CHARS))}</${tag}>`,
    ).join('');
  const head = `<thead><tr><th class="rn">#</th>${cells(preview.header, 'th')}</tr></thead>`;
  budget.take(head);
  const body: string[] = [];
  for (const [i, r] of preview.rows.entries()) {
    const row = `<tr><td class="rn">${i + 1}</td>${cells(r, 'td')}</tr>`;
    if (!budget.take(row)) break;
    body.push(row);
  }
  return {
    html: trustedHtml(`<div class="tablewrap"><table>${head}<tbody>${body.join('')}</tbody></table></div>`),
    shown: body.length,
  };
}

/** The note under a table that does not show everything (`shown` of its rows kept, by default all read). */
export function tableNote(preview: CsvPreview, truncatedBytes: boolean, shown = preview.rows.length): string | null {
  const hidden = preview.total - shown;
  const fmt = formatCount;
  if (hidden > 0) {
    return truncatedBytes
      ? `Showing the first ${fmt(shown)} rows; at least ${fmt(hidden)} more (and the rest of the file) are in the download.`
      : `Showing the first ${fmt(shown)} of ${fmt(preview.total)} rows; ${fmt(hidden)} more are in the download.`;
  }
  return null;
}
