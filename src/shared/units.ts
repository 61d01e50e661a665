/**
 * Sizes for people, in one unit system everywhere (CLI, dashboard, viewer): decimal units, as the
 * plans count them (1 GB = 1,000,000,000 bytes): 999 B, 1.2 KB, 34.5 MB, 512 MB, 1.0 GB.
 */
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 1000) return `${Math.max(0, Math.round(n))} B`;
  let value = n;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  // 999.96 KB would round to "1000.0 KB": step up instead.
  if (Number(value.toFixed(1)) >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value < 100 ? value.toFixed(1) : Math.round(value)} ${UNITS[unit]}`;
}

/**
 * A whole number with its thousands grouped by commas, as en-US writes it: 10,485,760. Written out
 * rather than `toLocaleString('en-US')`, whose first call sets up ICU's number formatting (about
 * 60 ms of CPU, most of a client command's start when a message or limit text needs one).
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  const digits = String(Math.abs(n));
  let grouped = digits.slice(0, digits.length % 3 || 3);
  for (let i = grouped.length; i < digits.length; i += 3) grouped += `,${digits.slice(i, i + 3)}`;
  return n < 0 ? `-${grouped}` : grouped;
}
