import {
  alternating,
  type Durations,
  type GetTarget,
  getLoad,
  LIST_SHAPES,
  type ListShape,
  listLoads,
  listTarget,
  listWarmSeconds,
} from './api-load.js';
import type { CairnChildInfo } from './cairn-child.js';
import { type BenchChild, childEnv, startChild } from './ipc.js';
import { interleavedLatency } from './latency.js';
import { type LoadResult, withServerCpu } from './load.js';
import type { Seeded } from './seed.js';
import { apiCall } from './transfer.js';

/**
 * One Cairn over one metadata store: start it, make the tenants, stop it, seed the big list
 * straight into the store, start it again. Seeding never overlaps a timed run.
 */
export interface Tenant {
  tenantId: string;
  apiKey: string;
}

export interface EngineServer {
  cairn: BenchChild<CairnChildInfo>;
  tenants: Record<string, Tenant>;
  /**
   * GET targets of the warm-up and of each measured round: tenants of their own, with one small
   * artifact each, so that no tenant's monthly request quota (100,000 on Pro) runs out.
   */
  getTargets: { warm: GetTarget[]; rounds: GetTarget[][] };
  seeded: Seeded;
}

/** Starts a Cairn child on `dataDir`; `build` is another checkout to take the product from (see cairn-child). */
export async function startCairn(
  dataDir: string,
  env: Record<string, string>,
  flags: string[] = [],
  build?: string,
): Promise<BenchChild<CairnChildInfo>> {
  const buildEnv: Record<string, string> = build ? { CAIRN_BENCH_BUILD: build } : {};
  return startChild<CairnChildInfo>('cairn-child.js', [dataDir, ...flags], childEnv({ ...env, ...buildEnv }));
}

async function smallArtifact(apiUrl: string, key: string): Promise<string> {
  const rec = await apiCall<{ artifact_id: string }>(apiUrl, key, 'POST', '/v1/artifacts', {
    filename: 'report.json',
    content: Buffer.from('{"ok":true}').toString('base64'),
    content_encoding: 'base64',
    session_id: 'bench-session',
    agent_id: 'bench-agent',
    metadata: { run: 'bench', step: 1 },
  });
  return rec.artifact_id;
}

/** `build`: another checkout's build to run (see startCairn); this checkout's when absent. */
export async function prepareEngine(
  dataDir: string,
  env: Record<string, string>,
  tenantNames: string[],
  rounds: number,
  seed: (listTenantId: string) => Promise<Seeded>,
  build?: string,
): Promise<EngineServer> {
  let cairn = await startCairn(dataDir, env, [], build);
  const tenants: Record<string, Tenant> = {};
  let getTargets: EngineServer['getTargets'];
  try {
    for (const name of [...tenantNames, 'list']) {
      tenants[name] = await cairn.call<Tenant>('tenant', { name, plan: 'pro' });
    }
    getTargets = await newGetTargets(cairn, 'get', rounds);
  } finally {
    await cairn.stop();
  }
  const seeded = await seed(tenants.list!.tenantId);
  cairn = await startCairn(dataDir, env, [], build);
  return { cairn, tenants, getTargets, seeded };
}

/** Tenants per GET run: a run of 4 s may then take up to 400,000 requests (100,000 per tenant). */
const TENANTS_PER_GET_RUN = 4;

/**
 * GET targets for one series of runs (a warm-up and `rounds` measured runs): new tenants with one
 * small artifact each, TENANTS_PER_GET_RUN per run. `prefix` keeps the tenant names of several
 * series apart.
 */
export async function newGetTargets(
  cairn: BenchChild<CairnChildInfo>,
  prefix: string,
  rounds: number,
): Promise<EngineServer['getTargets']> {
  const run = async (name: string) => {
    const targets: GetTarget[] = [];
    for (let i = 1; i <= TENANTS_PER_GET_RUN; i++) {
      const { apiKey } = await cairn.call<Tenant>('tenant', { name: `${prefix}-${name}-${i}`, plan: 'pro' });
      targets.push({ key: apiKey, id: await smallArtifact(cairn.info.apiUrl, apiKey) });
    }
    return targets;
  };
  const targets: EngineServer['getTargets'] = { warm: await run('warm'), rounds: [] };
  for (let i = 1; i <= rounds; i++) targets.rounds.push(await run(String(i)));
  return targets;
}

export interface EngineFigures {
  get: LoadResult;
  lists: Record<ListShape, LoadResult>;
}

/**
 * GET throughput (the best of `d.rounds` runs, alternating with each baseline's, with Cairn's CPU
 * per request in that run) and the list latencies.
 */
export async function measureEngine<B extends string>(
  server: EngineServer,
  d: Durations,
  baselines: Record<B, (seconds: number) => Promise<LoadResult>>,
): Promise<EngineFigures & { baselines: Record<B, LoadResult> }> {
  const url = server.cairn.info.apiUrl;
  const { warm, rounds } = server.getTargets;
  const names = Object.keys(baselines) as B[];
  const best = await alternating<B | 'cairn'>(
    [...names, 'cairn'],
    d,
    (side, round, seconds) =>
      side === 'cairn'
        ? withServerCpu(server.cairn, () => getLoad(url, round < 0 ? warm : rounds[round]!, seconds))
        : baselines[side](seconds),
    d.get,
  );
  const lists = await listLoads(url, server.tenants.list!.apiKey, server.seeded, d);
  const measured = Object.fromEntries(names.map((name) => [name, best[name]])) as Record<B, LoadResult>;
  return { get: best.cairn, lists, baselines: measured };
}

/**
 * The same figures for two engines measured side by side, so that their ratio compares the
 * engines rather than two moments of a shared machine: GET runs alternate between the two (the
 * best of each), and each list shape is timed on both in turns (interleavedLatency). Sides go in
 * the order of `servers`' keys. (`npm run bench -- --ab` uses the two halves alone to compare two
 * builds on one engine.)
 */
export async function measureSideBySide<S extends string>(
  servers: Record<S, EngineServer>,
  d: Durations,
): Promise<Record<S, EngineFigures>> {
  const get = await getSideBySide(servers, d);
  const lists = await listsSideBySide(servers, d);
  return Object.fromEntries(
    (Object.keys(servers) as S[]).map((side) => [side, { get: get[side], lists: lists[side] }]),
  ) as Record<S, EngineFigures>;
}

/** GET throughput of each server, runs alternating between them, the best of each. */
export function getSideBySide<S extends string>(
  servers: Record<S, EngineServer>,
  d: Durations,
): Promise<Record<S, LoadResult>> {
  return alternating(
    Object.keys(servers) as S[],
    d,
    (side, round, seconds) => {
      const { cairn, getTargets } = servers[side];
      return getLoad(cairn.info.apiUrl, round < 0 ? getTargets.warm : getTargets.rounds[round]!, seconds);
    },
    d.get,
  );
}

/** The latency of each list shape on each server, timed in turns. */
export async function listsSideBySide<S extends string>(
  servers: Record<S, EngineServer>,
  d: Durations,
): Promise<Record<S, EngineFigures['lists']>> {
  const sides = Object.keys(servers) as S[];
  const lists = Object.fromEntries(sides.map((side) => [side, {}])) as Record<S, Partial<EngineFigures['lists']>>;
  for (const shape of LIST_SHAPES) {
    const targets = Object.fromEntries(
      sides.map((side) => {
        const { cairn, tenants, seeded } = servers[side];
        return [side, listTarget(cairn.info.apiUrl, tenants.list!.apiKey, seeded, shape)];
      }),
    ) as Record<S, ReturnType<typeof listTarget>>;
    const measured = await interleavedLatency(targets, d.list, listWarmSeconds(d));
    for (const side of sides) lists[side][shape] = measured[side];
  }
  return lists as Record<S, EngineFigures['lists']>;
}

export { LIST_SHAPES };
