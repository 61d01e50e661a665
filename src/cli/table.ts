import { stdoutLine, visible } from './terminal-text.js';

/** Aligned plain-text columns for operator output; cells escaped as they will be shown (terminal-text.ts). */
export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    stdoutLine('(none)');
    return;
  }
  const cells = rows.map((r) =>
    columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : visible(String(r[c])))),
  );
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  stdoutLine(line(columns.map((c) => c.toUpperCase())));
  for (const row of cells) stdoutLine(line(row));
}
