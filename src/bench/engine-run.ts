import type { Durations } from './api-load.js';
import { type GetTarget, getLoad, LIST_SHAPES, type ListShape, listLoads } from './api-load.js';
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
  /** One small artifact per GET tenant. */
  getTargets: { warm: GetTarget; measured: GetTarget };
  seeded: Seeded;
}

export async function startCairn(dataDir: string, env: Record<string, string>): Promise<BenchChild<CairnChildInfo>> {
  return startChild<CairnChildInfo>('cairn-child.js', [dataDir], childEnv(env));
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
  seed: (listTenantId: string) => Promise<Seeded>,
): Promise<EngineServer> {
  let cairn = await startCairn(dataDir, env);
  const tenants: Record<string, Tenant> = {};
  const getTargets = { warm: { key: '', id: '' }, measured: { key: '', id: '' } };
  try {
    for (const name of [...tenantNames, 'get', 'get-warm', 'list']) {
      tenants[name] = await cairn.call<Tenant>('tenant', { name, plan: 'pro' });
    }
    for (const [slot, name] of [
      ['measured', 'get'],
      ['warm', 'get-warm'],
    ] as const) {
      const key = tenants[name]!.apiKey;
      getTargets[slot] = { key, id: await smallArtifact(cairn.info.apiUrl, key) };
    }
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

export async function measureEngine(server: EngineServer, d: Durations): Promise<EngineFigures> {
  const url = server.cairn.info.apiUrl;
  const get = await getLoad(url, server.getTargets.warm, server.getTargets.measured, d);
  const lists = await listLoads(url, server.tenants.list!.apiKey, server.seeded, d);
  return { get, lists };
}

export { LIST_SHAPES };
