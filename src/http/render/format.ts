/** Small formatting helpers of the viewer's pages. */

/** The receipt's `model`: `metadata.model` when it is a non-empty string (or a number). */
export function modelOf(metadata: Record<string, unknown>): string | null {
  const m = metadata.model;
  if (typeof m === 'string' && m.trim() !== '') return m;
  return typeof m === 'number' ? String(m) : null;
}
