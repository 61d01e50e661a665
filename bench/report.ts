import { execFileSync } from 'node:child_process';
import os from 'node:os';

/** One line of the results table. */
export interface ResultRow {
  name: string;
  /** What Cairn did, with units. */
  cairn: string;
  /** The baseline of the same run, with units ('' when the target is absolute). */
  baseline: string;
  /** The compared figure: a ratio, a latency pair, a byte count. */
  figure: string;
  target: string;
  /** null: informational, no target. */
  pass: boolean | null;
}

export interface Machine {
  date: string;
  cpu: string;
  cores: number;
  ramGiB: number;
  node: string;
  os: string;
  commit: string;
}

export function machine(): Machine {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    ramGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    commit,
  };
}

const verdict = (r: ResultRow) => (r.pass === null ? '–' : r.pass ? 'pass' : 'FAIL');

/** The table for the terminal: padded columns. */
export function textTable(rows: ResultRow[]): string {
  const header = ['benchmark', 'cairn', 'baseline', 'figure', 'target', 'result'];
  const cells = rows.map((r) => [r.name, r.cairn, r.baseline, r.figure, r.target, verdict(r)]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) => c.map((s, i) => s.padEnd(widths[i] ?? 0)).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

export function markdownTable(rows: ResultRow[]): string {
  const esc = (s: string) => s.replaceAll('|', '\\|');
  const lines = [
    '| benchmark | Cairn | baseline | figure | target | result |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${esc(r.name)} | ${esc(r.cairn)} | ${esc(r.baseline)} | ${esc(r.figure)} | ${esc(r.target)} | ${verdict(r)} |`,
    ),
  ];
  return lines.join('\n');
}

export function machineLines(m: Machine, mode: string): string[] {
  return [
    `- Date: ${m.date}`,
    `- Machine: ${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB RAM, ${m.os}`,
    `- Node: ${m.node}`,
    `- Commit: ${m.commit}`,
    `- Mode: ${mode}`,
  ];
}

export const ratio = (x: number) => `${x.toFixed(2)}×`;
export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
export const mbs = (v: number) => `${v.toFixed(0)} MB/s`;
export const rps = (v: number) => `${v.toFixed(0)} req/s`;
export const ms = (v: number) => `${v.toFixed(v < 10 ? 2 : 1)} ms`;
