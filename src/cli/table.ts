/** Aligned plain-text columns for operator output. */
export function printTable(rows: Record<string, unknown>[], columns: string[]): void {
  if (rows.length === 0) {
    console.log('(none)');
    return;
  }
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : String(r[c]))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  console.log(line(columns.map((c) => c.toUpperCase())));
  for (const row of cells) console.log(line(row));
}
