/** Small formatting helpers the viewer shell and the dashboard share. */

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 10 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

/** The receipt's `model`: `metadata.model` when it is a non-empty string (or a number). */
export function modelOf(metadata: Record<string, unknown>): string | null {
  const m = metadata.model;
  if (typeof m === 'string' && m.trim() !== '') return m;
  return typeof m === 'number' ? String(m) : null;
}
