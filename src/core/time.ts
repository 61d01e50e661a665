const MS_PER_DAY = 86_400_000;
/** 0000-01-01 … 9999-12-31 in ms since the epoch: the range `toISOString` writes with 4-digit years. */
const FOUR_DIGIT_YEARS = { from: -62_167_219_200_000, until: 253_402_300_800_000 };

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * RFC 3339 UTC with milliseconds, the API's one timestamp format: exactly what
 * `Date#toISOString` writes. Every record carries two or three of these and every list 50 records,
 * so it is computed here (days to a civil date, H. Hinnant's algorithm) rather than by building
 * a Date, which cost more than the rest of turning a row into a record.
 */
export function toIso(ms: number): string {
  if (!Number.isInteger(ms) || ms < FOUR_DIGIT_YEARS.from || ms >= FOUR_DIGIT_YEARS.until) {
    return new Date(ms).toISOString();
  }
  const days = Math.floor(ms / MS_PER_DAY);
  let rest = ms - days * MS_PER_DAY;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const y = year < 1000 ? `${year}`.padStart(4, '0') : `${year}`;
  return `${y}-${pad2(month)}-${pad2(day)}T${pad2(h)}:${pad2(m)}:${pad2(s)}.${pad3(rest - s * 1000)}Z`;
}

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

/** The first instant of the UTC month after the one `ms` falls in (when monthKey changes next). */
export function nextMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Parses an RFC 3339 timestamp (or a date) into ms; null when it is not one. */
export function parseTimestamp(s: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})?)?$/.test(s)) return null;
  const ms = Date.parse(s);
  return Number.isFinite(ms) ? ms : null;
}
