import { styleMark, visible } from '../terminal-text.js';

/** Human renderings of sizes, times and tables, with colour only where a person is looking. */

export { formatBytes } from '../../shared/units.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** "just now", "3 min ago", "5 h ago", "2 d ago"; beyond a week (or in the future) an ISO minute. */
export function formatAge(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const ago = now - t;
  if (ago < -MINUTE || ago >= 7 * DAY) return isoMinute(t);
  if (ago < MINUTE) return 'just now';
  if (ago < HOUR) return `${Math.floor(ago / MINUTE)} min ago`;
  if (ago < DAY) return `${Math.floor(ago / HOUR)} h ago`;
  return `${Math.floor(ago / DAY)} d ago`;
}

/** "in 3 d", "in 5 h", "in 12 min", or an ISO minute for the past and the far future. */
export function formatUntil(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const left = t - now;
  if (left < 0 || left >= 400 * DAY) return isoMinute(t);
  if (left < HOUR) return `in ${Math.max(1, Math.round(left / MINUTE))} min`;
  if (left < DAY) return `in ${Math.round(left / HOUR)} h`;
  return `in ${Math.round(left / DAY)} d`;
}

function isoMinute(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16)}Z`;
}

export type Style = 'bold' | 'dim' | 'green' | 'yellow' | 'cyan' | 'red';
const SGR: Record<Style, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  red: [31, 39],
};

/**
 * Colour for a stream: on when it is a terminal and NO_COLOR is unset or empty
 * (https://no-color.org); FORCE_COLOR (not "0") turns it on anyway, e.g. under a pager.
 */
export function colourEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR) return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '') return env.FORCE_COLOR !== '0';
  return stream.isTTY === true;
}

export type Paint = (style: Style | null, text: string) => string;

/**
 * Paints with marks that the output's last pass (forTerminal, terminal-text.ts) turns into
 * colour after it has escaped every control character that came with the text.
 */
export function painter(enabled: boolean): Paint {
  return (style, text) => {
    if (!enabled || style === null || text === '') return text;
    const [on, off] = SGR[style];
    return `${styleMark(on)}${text}${styleMark(off)}`;
  };
}

export interface Column<T> {
  header: string;
  value: (row: T) => string;
  style?: Style;
  /** Right-align (numbers, sizes). */
  right?: boolean;
  /** To fit the terminal, its cells may be cut (ending in …) down to this width. */
  minWidth?: number;
  /** To fit the terminal, it may be left out (after every cut), rightmost first. */
  optional?: boolean;
  /** To fit the terminal, it goes on a line of its own under each row, whole (a URL to copy). */
  ownLine?: boolean;
}

/** The width a table may take: the terminal's when stdout is one; unbounded into a pipe or a file. */
export function terminalWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number | undefined {
  return stream.isTTY && stream.columns ? stream.columns : undefined;
}

/** `text` cut to `width` characters, the last one an ellipsis when anything was cut. */
export function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

const GAP = 2;

/**
 * Aligned columns; widths are measured on the plain text so colour codes never skew them. Cells
 * are escaped first (terminal-text.ts), as they will be shown, and a line feed in one cannot
 * break its row. Given a `maxWidth` (the terminal's), a table wider than it is fitted cell by
 * cell, never by letting the terminal wrap whole lines: `ownLine` columns move under their row,
 * then `minWidth` columns are cut (the widest first), then `optional` columns are left out.
 */
export function renderTable<T>(rows: T[], columns: Column<T>[], paint: Paint, maxWidth?: number): string {
  const all = rows.map((r) => columns.map((c) => visible(c.value(r))));
  const natural = columns.map((c, i) => Math.max(c.header.length, ...all.map((row) => (row[i] ?? '').length)));
  const span = (idx: number[], w: number[]) => idx.reduce((sum, i) => sum + (w[i] ?? 0), 0) + GAP * (idx.length - 1);

  let inline = columns.map((_, i) => i);
  let below: number[] = [];
  const widths = [...natural];
  if (maxWidth !== undefined && span(inline, widths) > maxWidth) {
    below = inline.filter((i) => columns[i]?.ownLine);
    inline = inline.filter((i) => !columns[i]?.ownLine);
    for (;;) {
      if (span(inline, widths) <= maxWidth) break;
      const cuttable = inline.filter((i) => (widths[i] ?? 0) > (columns[i]?.minWidth ?? Number.POSITIVE_INFINITY));
      if (cuttable.length > 0) {
        const widest = cuttable.reduce((a, b) => ((widths[b] ?? 0) > (widths[a] ?? 0) ? b : a));
        widths[widest] = (widths[widest] ?? 0) - 1;
        continue;
      }
      const drop = inline.filter((i) => columns[i]?.optional).at(-1);
      if (drop === undefined) break;
      inline = inline.filter((i) => i !== drop);
    }
  }

  const line = (vals: string[], styleOf: (i: number) => Style | null) =>
    inline
      .map((i, k) => {
        const w = widths[i] ?? 0;
        const v = clip(vals[i] ?? '', w);
        const last = k === inline.length - 1;
        const padded = columns[i]?.right ? v.padStart(w) : last ? v : v.padEnd(w);
        return paint(styleOf(i), padded);
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  const out = [
    line(
      columns.map((c) => c.header),
      () => 'bold',
    ),
  ];
  for (const row of all) {
    out.push(line(row, (i) => columns[i]?.style ?? null));
    for (const i of below) out.push(`  ${paint(columns[i]?.style ?? null, row[i] ?? '')}`);
  }
  return out.join('\n');
}

/** "Label   value" lines with the labels aligned; a value is escaped whole, line feeds included. */
export function renderFields(fields: [string, string][], paint: Paint): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${paint('dim', k.padEnd(width))}  ${visible(v)}`).join('\n');
}
