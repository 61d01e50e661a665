import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as ConfigModule from '../src/config.js';
import type { PlanName } from '../src/core/plans.js';
import type { RateDecision, RateLimiter, RateRule } from '../src/ports/rate-limiter.js';
import type * as RuntimeModule from '../src/runtime.js';
import type * as ServerModule from '../src/server.js';
import { serveIpc } from './ipc.js';
import { withoutStoring } from './no-store.js';
import { RssSampler } from './rss.js';

/**
 * The Cairn under test is the product as `npm run build` left it in `<build>/dist`: this checkout's
 * by default, or another checkout's (CAIRN_BENCH_BUILD), so that two builds can be measured
 * against each other in one run (`npm run bench -- --ab <dir>`).
 */
const BUILD = process.env.CAIRN_BENCH_BUILD ?? path.resolve(import.meta.dirname, '../../..');
const product = <T>(module: string): Promise<T> => import(pathToFileURL(path.join(BUILD, 'dist', module)).href);
const { loadConfig } = await product<typeof ConfigModule>('config.js');
const { createAdapters } = await product<typeof RuntimeModule>('runtime.js');
const { startServer } = await product<typeof ServerModule>('server.js');

/**
 * Cairn under test, in its own process: the real `startServer` over the configured stores
 * (CAIRN_* environment, data folder from argv). One change from `cairn serve`: the per-tenant
 * rule handed to the rate limiter is lifted so load tests measure the server rather than the
 * plan's 100 req/s. The real limiter still runs on every call (a 10 ms window, so its log stays
 * as short as under a real plan), and so does the monthly request counter. With `--no-store`
 * after the data folder it is the small-upload baseline (see no-store.ts).
 */
const LIFTED: RateRule = { sustainedPerSecond: 1_000_000, burst: 10_000 };

class LiftedLimiter implements RateLimiter {
  // A build that decides admission synchronously when its limiter can (Cairn before the
  // simplification) finds the same here, so A/B runs against it compare like with like.
  readonly takeNow?: (key: string, rule: RateRule, nowMs: number) => RateDecision;

  constructor(private readonly inner: RateLimiter) {
    const takeNow = (inner as { takeNow?: LiftedLimiter['takeNow'] }).takeNow?.bind(inner);
    if (takeNow) this.takeNow = (key, _rule, nowMs) => takeNow(key, LIFTED, nowMs);
  }

  take(key: string, _rule: RateRule, nowMs: number): Promise<RateDecision> {
    return this.inner.take(key, LIFTED, nowMs);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

export interface CairnChildInfo {
  apiUrl: string;
  contentUrl: string;
  pid: number;
}

const silentLog = { info() {}, warn() {}, error() {} };

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error('usage: cairn-child <dataDir> [--no-store]');
  const env = process.env;
  const config = loadConfig(
    { dataDir, apiPort: 0, viewerPort: 0, contentPort: 0, logLevel: 'silent', sweepIntervalSeconds: 0 },
    env,
  );
  let adapters = await createAdapters(config, silentLog);
  if (process.argv[3] === '--no-store') adapters = withoutStoring(adapters);
  adapters.limiter = new LiftedLimiter(adapters.limiter);
  const server = await startServer(config, { adapters, env, log: silentLog });
  const rss = new RssSampler(50);
  const stop = async () => {
    rss.stop();
    await server.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('disconnect', () => void stop());
  serveIpc(
    { apiUrl: server.config.apiOrigin, contentUrl: server.config.contentOrigin, pid: process.pid },
    async (cmd, args) => {
      switch (cmd) {
        case 'tenant': {
          const { name, plan } = args as { name: string; plan: PlanName };
          const created = await server.core.tenants.create(name, plan);
          return { tenantId: created.tenant.id, apiKey: created.apiKey };
        }
        case 'rss-reset':
          return rss.reset();
        case 'rss-peak':
          return rss.read();
        default:
          throw new Error(`unknown command ${cmd}`);
      }
    },
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
