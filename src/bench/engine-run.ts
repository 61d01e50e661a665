import {
  alternating,
  type Durations,
  type GetTarget,
  getLoad,
  LIST_SHAPES,
  type ListShape,
  listLoads,
} from './api-load.js';
import type { CairnChildInfo } from './cairn-child.js';
import { type BenchChild, childEnv, startChild } from './ipc.js';
import type { LoadResult } from './load.js';
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
   * One small artifact per GET tenant: one for the warm-up and one per measured round, so that no
   * tenant's monthly request quota (100,000 on Pro) runs out during the runs.
   */
  getTargets: { warm: GetTarget; rounds: GetTarget[] };
  seeded: Seeded;
}

export async function startCairn(
  dataDir: string,
  env: Record<string, string>,
  flags: string[] = [],
): Promise<BenchChild<CairnChildInfo>> {
  return startChild<CairnChildInfo>('cairn-child.js', [dataDir, ...flags], childEnv(env));
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

export async function prepareEngine(
  dataDir: string,
  env: Record<string, string>,
  tenantNames: string[],
  rounds: number,
  seed: (listTenantId: string) => Promise<Seeded>,
): Promise<EngineServer> {
  let cairn = await startCairn(dataDir, env);
  const tenants: Record<string, Tenant> = {};
  const getNames = Array.from({ length: rounds }, (_, i) => `get-${i + 1}`);
  let getTargets: EngineServer['getTargets'];
  try {
    for (const name of [...tenantNames, 'get-warm', ...getNames, 'list']) {
      tenants[name] = await cairn.call<Tenant>('tenant', { name, plan: 'pro' });
    }
    const target = async (name: string) => {
      const key = tenants[name]!.apiKey;
      return { key, id: await smallArtifact(cairn.info.apiUrl, key) };
    };
    getTargets = { warm: await target('get-warm'), rounds: [] };
    for (const name of getNames) getTargets.rounds.push(await target(name));
  } finally {
    await cairn.stop();
  }
  const seeded = await seed(tenants.list!.tenantId);
  cairn = await startCairn(dataDir, env);
  return { cairn, tenants, getTargets, seeded };
}

export interface EngineFigures {
  get: LoadResult;
  lists: Record<ListShape, LoadResult>;
}

/**
 * GET throughput (the best of `d.rounds` runs, alternating with `baselineGet`'s runs when given)
 * and the list latencies.
 */
export async function measureEngine(
  server: EngineServer,
  d: Durations,
  baselineGet?: (seconds: number) => Promise<LoadResult>,
): Promise<EngineFigures & { baselineGet?: LoadResult }> {
  const url = server.cairn.info.apiUrl;
  const { warm, rounds } = server.getTargets;
  const cairnGet = (round: number, seconds: number) => getLoad(url, round < 0 ? warm : rounds[round]!, seconds);
  const sides = baselineGet ? (['baseline', 'cairn'] as const) : (['cairn'] as const);
  const best: Partial<Record<'baseline' | 'cairn', LoadResult>> = await alternating<'baseline' | 'cairn'>(
    sides,
    d,
    (side, round, seconds) => (side === 'cairn' ? cairnGet(round, seconds) : baselineGet!(seconds)),
    d.get,
  );
  const lists = await listLoads(url, server.tenants.list!.apiKey, server.seeded, d);
  return { get: best.cairn!, lists, ...(best.baseline ? { baselineGet: best.baseline } : {}) };
}

export { LIST_SHAPES };
