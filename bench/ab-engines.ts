import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { type Durations, LIST_SHAPES } from './api-load.js';
import { type EngineServer, getSideBySide, listsSideBySide, prepareEngine } from './engine-run.js';
import { creditRequestsPostgres, creditRequestsSqlite, dropSchema, seedPostgres, seedSqlite } from './seed.js';

/**
 * The engine figures of `npm run bench -- --ab <dir> --only get-sqlite,lists-sqlite,…`: the GET
 * throughput and list latencies of the full bench, this time of build A against build B on one
 * engine. Both sides get the same seeded rows (the same `now`, so the same ids, times and
 * cursors) in stores of their own, then run `pairs` rounds, A first in the first, B in the
 * second, and so on. Each round is what the full bench measures between its engines: GET runs after a
 * warm-up of each side, and each list shape timed on both in half-second turns. The list tenant
 * gets a request credit (creditRequestsSqlite), as those turns take more than its monthly quota.
 */

export const AB_ENGINE_FIGURES = ['get-sqlite', 'lists-sqlite', 'get-postgres', 'lists-postgres'] as const;
export type AbEngineFigure = (typeof AB_ENGINE_FIGURES)[number];

type Engine = 'sqlite' | 'postgres';
type SideName = 'A' | 'B';
const ENGINE_NAMES: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** One line of the A/B table: a figure's values on each side, one per pair. */
export interface AbRow {
  label: string;
  format: (x: number) => string;
  A: number[];
  B: number[];
}

export interface AbEngineSettings {
  builds: Record<SideName, string | undefined>;
  figures: AbEngineFigure[];
  pairs: number;
  rows: number;
  d: Durations;
  /** PostgreSQL's URL; required when a postgres figure is asked for. */
  pgUrl?: string;
}

const reqs = (x: number) => x.toFixed(0);
const msec = (x: number) => x.toFixed(x < 10 ? 2 : 1);

/** A and B on one engine over the same rows; `cleanup` stops them and drops their data. */
async function prepareSides(
  root: string,
  engine: Engine,
  s: AbEngineSettings,
  log: (line: string) => void,
): Promise<{ servers: Record<SideName, EngineServer>; cleanup: () => Promise<void> }> {
  const now = Date.now();
  const servers: Partial<Record<SideName, EngineServer>> = {};
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    for (const server of Object.values(servers)) await server.cairn.stop();
    for (const done of cleanups) await done();
  };
  try {
    for (const side of ['A', 'B'] as const) {
      const dataDir = path.join(root, `data-${engine}-${side}`);
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      const t0 = Date.now();
      if (engine === 'sqlite') {
        servers[side] = await prepareEngine(
          dataDir,
          {},
          [],
          s.pairs,
          async (tenantId) => {
            const db = path.join(dataDir, 'cairn.sqlite');
            creditRequestsSqlite(db, tenantId, Date.now());
            return seedSqlite(db, tenantId, s.rows, now);
          },
          s.builds[side],
        );
      } else {
        const url = s.pgUrl!;
        const schema = `cairn_bench_ab_${randomBytes(4).toString('hex')}_${side.toLowerCase()}`;
        cleanups.push(() =>
          dropSchema(url, schema).catch((err: Error) => log(`could not drop schema ${schema}: ${err.message}`)),
        );
        servers[side] = await prepareEngine(
          dataDir,
          { CAIRN_DATABASE_URL: url, CAIRN_DATABASE_SCHEMA: schema },
          [],
          s.pairs,
          async (tenantId) => {
            await creditRequestsPostgres(url, schema, tenantId, Date.now());
            return seedPostgres(url, schema, tenantId, s.rows, now);
          },
          s.builds[side],
        );
      }
      log(`${ENGINE_NAMES[engine]} ${side}: ${s.rows} rows seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    }
    return { servers: servers as Record<SideName, EngineServer>, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** The figures asked for on one engine, `pairs` alternating rounds of A and B. */
async function engineRows(root: string, engine: Engine, s: AbEngineSettings, log: (line: string) => void) {
  const name = ENGINE_NAMES[engine];
  const get = s.figures.includes(`get-${engine}`);
  const lists = s.figures.includes(`lists-${engine}`);
  const getRow: AbRow = { label: `GET /v1/artifacts/{id}, ${name} (req/s)`, format: reqs, A: [], B: [] };
  const listRows = LIST_SHAPES.flatMap((shape) =>
    (['p50', 'p99'] as const).map((q) => ({
      shape,
      q,
      row: { label: `list ${shape}, ${name}, ${q} (ms)`, format: msec, A: [], B: [] } as AbRow,
    })),
  );
  const { servers, cleanup } = await prepareSides(root, engine, s, log);
  try {
    for (let pair = 0; pair < s.pairs; pair++) {
      const order: SideName[] = pair % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
      // This pair's GET tenants alone (measureSideBySide's round 0), so no tenant's quota runs out.
      const round = Object.fromEntries(
        order.map((side) => {
          const server = servers[side];
          const rounds = [server.getTargets.rounds[pair]!];
          return [side, { ...server, getTargets: { warm: server.getTargets.warm, rounds } }];
        }),
      ) as Record<SideName, EngineServer>;
      const d = { ...s.d, rounds: 1 };
      if (get) {
        const got = await getSideBySide(round, d);
        for (const side of order) getRow[side].push(got[side].reqPerSec);
        log(`get-${engine} pair ${pair + 1}: A ${reqs(got.A.reqPerSec)}, B ${reqs(got.B.reqPerSec)} req/s`);
      }
      if (lists) {
        const got = await listsSideBySide(round, d);
        for (const { shape, q, row } of listRows) for (const side of order) row[side].push(got[side][shape][q]);
        log(
          `lists-${engine} pair ${pair + 1}, p50 A/B ms: ${LIST_SHAPES.map((shape) => `${msec(got.A[shape].p50)}/${msec(got.B[shape].p50)}`).join(', ')}`,
        );
      }
    }
  } finally {
    await cleanup();
  }
  return [...(get ? [getRow] : []), ...(lists ? listRows.map((l) => l.row) : [])];
}

/** The rows of the engine figures asked for, SQLite's then PostgreSQL's, one engine at a time. */
export async function abEngineRows(root: string, s: AbEngineSettings, log: (line: string) => void): Promise<AbRow[]> {
  const rows: AbRow[] = [];
  for (const engine of ['sqlite', 'postgres'] as const) {
    if (!s.figures.some((f) => f.endsWith(`-${engine}`))) continue;
    if (engine === 'postgres' && !s.pgUrl)
      throw new Error('postgres figures need CAIRN_BENCH_DATABASE_URL or CAIRN_TEST_DATABASE_URL');
    rows.push(...(await engineRows(root, engine, s, log)));
  }
  return rows;
}
