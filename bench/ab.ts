import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { AB_ENGINE_FIGURES, type AbEngineFigure, type AbRow, abEngineRows } from './ab-engines.js';
import { AB_STORE_FIGURES, type AbStoreFigure, abStoreRows } from './ab-store.js';
import { type Durations, deleteLoad, type GetTarget, getLoad, smallUploadLoad } from './api-load.js';
import { settle, writeRandomFile } from './big-files.js';
import type { CairnChildInfo } from './cairn-child.js';
import { newGetTargets, startCairn } from './engine-run.js';
import type { BenchChild } from './ipc.js';
import { apiCall, download, mbPerSec, uploadMultipart } from './transfer.js';
import { type UploadFlow, uploadFlow } from './upload-flows.js';

/**
 * `npm run bench -- --ab <dir> [--a <dir>]`: this checkout's build, or the one `--a` names (A),
 * against another checkout's (B, with `npm run build` done there), figure by figure, in one run. Each pair runs A then B, the next B
 * then A, so neither side always meets the machine first; the report gives min / median / max of
 * each side and the median of B/A. This is how a change that exists only for speed shows that it
 * earns its place. `--only get-sqlite,lists-sqlite,get-postgres,lists-postgres` adds (or, alone,
 * gives) the full bench's GET and list figures on seeded stores, build against build
 * (ab-engines.ts; `--rows N` for fewer rows than the full bench's).
 */

const MIB = 1024 * 1024;

export const AB_FIGURES = ['presigned', 'tus', 'multipart', 'download', 'get', 'small', 'delete'] as const;
export type AbFigure = (typeof AB_FIGURES)[number];

export interface AbSettings {
  /** A's build folder (`--a <dir>`); this checkout's when absent. */
  base?: string;
  other: string;
  figures: AbFigure[];
  engineFigures: AbEngineFigure[];
  storeFigures: AbStoreFigure[];
  pairs: number;
  /** Seeded rows and run lengths of the engine figures. */
  rows: number;
  d: Durations;
  bytes: number;
  multipartBytes: number;
  /** Seconds of each GET and small-upload run. */
  seconds: number;
}

interface Side {
  name: 'A' | 'B';
  cairn: BenchChild<CairnChildInfo>;
  key: string;
  getTargets: GetTarget[][];
  /** An artifact of `bytes` random bytes, for downloads. */
  big?: string;
}

const UNITS: Record<AbFigure, string> = {
  presigned: 'MB/s',
  tus: 'MB/s',
  multipart: 'MB/s',
  download: 'MB/s',
  get: 'req/s',
  small: 'uploads/s',
  delete: 'deletes/s',
};

/** Makes the file's bytes new (its first 16 bytes), so every upload stores a blob of its own. */
async function freshen(file: string, run: number): Promise<void> {
  const h = await open(file, 'r+');
  try {
    const head = Buffer.alloc(16);
    head.writeDoubleLE(run, 0);
    head.writeDoubleLE(Math.random(), 8);
    await h.write(head, 0, 16, 0);
  } finally {
    await h.close();
  }
}

/** One upload of the file through `flow` (upload-flows.ts): its rate and its artifact. */
async function upload(
  flow: UploadFlow,
  side: Side,
  file: string,
  bytes: number,
): Promise<{ rate: number; id: string }> {
  const up = await uploadFlow(flow, { apiUrl: side.cairn.info.apiUrl, key: side.key, file, bytes });
  return { rate: mbPerSec(bytes, up.ms), id: up.artifactId };
}

async function measure(figure: AbFigure, side: Side, s: AbSettings, file: string, run: number): Promise<number> {
  const api = side.cairn.info.apiUrl;
  switch (figure) {
    case 'presigned':
    case 'tus': {
      await freshen(file, run);
      await settle({ file, bytes: s.bytes });
      return (await upload(figure, side, file, s.bytes)).rate;
    }
    case 'multipart': {
      await freshen(file, run);
      await settle({ file, bytes: s.multipartBytes });
      const up = await uploadMultipart(api, side.key, file, s.multipartBytes, 'part.bin');
      if (up.value.status !== 201) throw new Error(`multipart → ${up.value.status}: ${up.value.body}`);
      return mbPerSec(s.multipartBytes, up.ms);
    }
    case 'download': {
      if (!side.big) {
        await freshen(file, run);
        side.big = (await upload('presigned', side, file, s.bytes)).id;
      }
      await settle({ file, bytes: s.bytes });
      const { download_url } = await apiCall<{ download_url: string }>(
        api,
        side.key,
        'GET',
        `/v1/artifacts/${side.big}/download-url`,
      );
      const d = await download(download_url);
      if (d.value.status !== 200 || d.value.bytes !== s.bytes) throw new Error(`download: ${JSON.stringify(d)}`);
      return mbPerSec(s.bytes, d.ms);
    }
    case 'get': {
      const targets = side.getTargets[run];
      if (!targets) throw new Error(`no GET targets for run ${run}`);
      return (await getLoad(api, targets, s.seconds)).reqPerSec;
    }
    case 'small':
      return (await smallUploadLoad(api, side.key, s.seconds)).reqPerSec;
    case 'delete': {
      // Artifacts to delete (small uploads, not timed), then each deleted once.
      await smallUploadLoad(api, side.key, s.seconds);
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { artifacts: { artifact_id: string }[]; next_cursor: string | null } = await apiCall(
          api,
          side.key,
          'GET',
          `/v1/artifacts?limit=200${cursor ? `&cursor=${cursor}` : ''}`,
        );
        ids.push(...page.artifacts.map((a) => a.artifact_id));
        cursor = page.next_cursor;
      } while (cursor);
      return (await deleteLoad(api, side.key, ids)).reqPerSec;
    }
  }
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const spread = (xs: number[], f: (x: number) => string) =>
  `${f(Math.min(...xs))} / ${f(median(xs))} / ${f(Math.max(...xs))}`;

export async function abRun(root: string, s: AbSettings, log: (line: string) => void): Promise<string> {
  const rows = s.figures.length ? await transferRows(root, s, log) : [];
  const builds = { A: s.base, B: s.other };
  const pgUrl = process.env.CAIRN_BENCH_DATABASE_URL || process.env.CAIRN_TEST_DATABASE_URL;
  const engine = {
    builds,
    figures: s.engineFigures,
    pairs: s.pairs,
    rows: s.rows,
    d: s.d,
    ...(pgUrl ? { pgUrl } : {}),
  };
  if (s.engineFigures.length) rows.push(...(await abEngineRows(root, engine, log)));
  if (s.storeFigures.length) {
    rows.push(...(await abStoreRows(builds, s.storeFigures, s.pairs, s.seconds >= 4 ? 4000 : 1000, log)));
  }
  return [
    `A = ${s.base ?? 'this checkout'}, B = ${s.other}; ${s.pairs} pairs, alternating order` +
      (s.figures.length ? '; transfer figures after a warm-up pair' : '') +
      (s.engineFigures.length ? `; engine figures over ${s.rows.toLocaleString('en-US')} seeded rows` : ''),
    '',
    '| figure | A min / median / max | B min / median / max | B / A (medians) |',
    '|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${spread(r.A, r.format)} | ${spread(r.B, r.format)} | ${(median(r.B) / median(r.A)).toFixed(2)}× |`,
    ),
  ].join('\n');
}

/** The figures of AB_FIGURES asked for, on an A and a B with no seeded rows. */
async function transferRows(root: string, s: AbSettings, log: (line: string) => void): Promise<AbRow[]> {
  const file = path.join(root, 'ab.bin');
  if (s.figures.some((f) => f !== 'get' && f !== 'small')) await writeRandomFile(file, s.bytes);
  const runs = s.pairs + 1; // one warm-up pair, not reported
  const sides: Side[] = [];
  try {
    for (const [name, build] of [
      ['A', s.base],
      ['B', s.other],
    ] as const) {
      const cairn = await startCairn(path.join(root, `data-${name}`), {}, [], build);
      const { apiKey } = await cairn.call<{ apiKey: string }>('tenant', { name: 'ab', plan: 'pro' });
      const targets = s.figures.includes('get') ? await newGetTargets(cairn, 'ab', runs) : { warm: [], rounds: [] };
      sides.push({ name, cairn, key: apiKey, getTargets: [targets.warm, ...targets.rounds] });
    }
    const rows: AbRow[] = [];
    for (const figure of s.figures) {
      const row: AbRow = { label: `${figure} (${UNITS[figure]})`, format: fmt, A: [], B: [] };
      for (let run = 0; run < runs; run++) {
        const order = run % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) {
          const value = await measure(figure, side, s, file, run);
          log(`${figure} ${run === 0 ? 'warm-up' : `pair ${run}`}: ${side.name} ${fmt(value)} ${UNITS[figure]}`);
          if (run > 0) row[side.name].push(value);
        }
      }
      rows.push(row);
    }
    return rows;
  } finally {
    for (const side of sides) await side.cairn.stop();
    await rm(file, { force: true });
  }
}

/** `defaults`: the bench's own settings (quick or full), whose rows and durations the engine figures take. */
export function abSettings(
  argv: string[],
  defaults: { quick: boolean; rows: number; d: Durations },
): AbSettings | null {
  const { quick } = defaults;
  const at = argv.indexOf('--ab');
  if (at < 0) return null;
  const other = argv[at + 1];
  if (!other) throw new Error('--ab needs the folder of another checkout (with `npm run build` done)');
  const only = argv.indexOf('--only');
  const asked = only >= 0 ? (argv[only + 1] ?? '').split(',') : [...AB_FIGURES];
  const known: readonly string[] = [...AB_FIGURES, ...AB_ENGINE_FIGURES, ...AB_STORE_FIGURES];
  for (const f of asked) if (!known.includes(f)) throw new Error(`--only: unknown figure ${f} (${known.join(', ')})`);
  const figures = AB_FIGURES.filter((f) => asked.includes(f));
  const engineFigures = AB_ENGINE_FIGURES.filter((f) => asked.includes(f));
  const storeFigures = AB_STORE_FIGURES.filter((f) => asked.includes(f));
  const rowsAt = argv.indexOf('--rows');
  const rows = rowsAt >= 0 ? Number(argv[rowsAt + 1]) : defaults.rows;
  if (!Number.isInteger(rows) || rows < 1000) throw new Error('--rows must be a whole number ≥ 1000');
  const pairsAt = argv.indexOf('--pairs');
  const pairs = pairsAt >= 0 ? Number(argv[pairsAt + 1]) : 3;
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error('--pairs must be a whole number ≥ 1');
  const baseAt = argv.indexOf('--a');
  const base = baseAt >= 0 ? argv[baseAt + 1] : undefined;
  if (baseAt >= 0 && !base) throw new Error('--a needs the folder of a checkout (with `npm run build` done)');
  return {
    ...(base ? { base: path.resolve(base) } : {}),
    other: path.resolve(other),
    figures,
    engineFigures,
    storeFigures,
    pairs,
    rows,
    d: defaults.d,
    bytes: quick ? 16 * MIB : 1024 * MIB,
    multipartBytes: quick ? 8 * MIB : 450 * MIB,
    seconds: quick ? 1 : 4,
  };
}
