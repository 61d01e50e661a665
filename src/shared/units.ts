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
