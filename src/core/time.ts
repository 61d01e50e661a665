/** RFC 3339 UTC with milliseconds, the API's one timestamp format. */
export const toIso = (ms: number): string => new Date(ms).toISOString();

export const toIsoOrNull = (ms: number | null): string | null => (ms === null ? null : toIso(ms));

/** `YYYY-MM` of a moment, the key of the monthly request counter (every request asks: cached per month). */
export function monthKey(ms: number): string {
  if (ms < lastMonth.from || ms >= lastMonth.until) {
    const d = new Date(ms);
    const y = d.getUTCFullYear();
    const m = d.getUTCMonth();
    lastMonth = { from: Date.UTC(y, m, 1), until: Date.UTC(y, m + 1, 1), key: d.toISOString().slice(0, 7) };
  }
  return lastMonth.key;
}
let lastMonth = { from: 0, until: 0, key: '' };

/** Parses an RFC 3339 timestamp (or a date) into ms; null when it is not one. */
export function parseTimestamp(s: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?)?$/.test(s)) return null;
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : null;
}

/** Parses `30s`, `15m`, `12h`, `7d` into seconds; null when malformed. */
export function parseDuration(s: string): number | null {
  const m = /^([1-9]\d{0,6})([smhd])$/.exec(s.trim());
  if (!m) return null;
  const n = Number(m[1]);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as 's' | 'm' | 'h' | 'd'];
  return n * unit;
}
