import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import type { Clock } from '../../src/ports/clock.js';
import { type RunningServer, startServer } from '../../src/server.js';
import {
  assertPortFree,
  type PrivatePostgres,
  type PrivateRedis,
  type PrivateS3,
  startPrivatePostgres,
  startPrivateRedis,
  startPrivateS3,
} from './services.js';

/** A Cairn server on the scale-out set, every service private to the test (see services.ts). */
export interface FaultStack {
  server: RunningServer;
  apiUrl: string;
  metricsUrl: string;
  key: string;
  pg: PrivatePostgres;
  redis: PrivateRedis;
  s3: PrivateS3;
  /** What the server logged (its Logger), one JSON object per entry. */
  logs: { level: string; msg?: string; obj: object }[];
  close(): Promise<void>;
}

/**
 * Real time that a test can hold still: while frozen, rate-limit windows neither slide nor refill,
 * so how many calls of a burst pass does not depend on how fast a loaded machine sends them.
 */
export class FreezableClock implements Clock {
  private frozenAt: number | null = null;
  now(): number {
    return this.frozenAt ?? Date.now();
  }
  freeze(): void {
    this.frozenAt = Date.now();
  }
  thaw(): void {
    this.frozenAt = null;
  }
}

/** Ports: base (PostgreSQL), base+1 (Redis), base+2 (S3); each test file has its own base. */
export async function startFaultStack(basePort: number, env: Record<string, string> = {}, clock?: Clock) {
  for (const port of [basePort, basePort + 1, basePort + 2]) await assertPortFree(port);
  const pg = await startPrivatePostgres(basePort);
  const redis = await startPrivateRedis(basePort + 1);
  const s3 = await startPrivateS3(basePort + 2);
  process.env.AWS_ACCESS_KEY_ID ??= s3.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY ??= s3.credentials.secretAccessKey;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-fault-data-'));
  const fullEnv = {
    CAIRN_DATABASE_URL: pg.url,
    CAIRN_REDIS_URL: redis.url,
    CAIRN_S3_BUCKET: s3.bucket,
    CAIRN_S3_ENDPOINT: s3.endpoint,
    CAIRN_S3_REGION: 'us-east-1',
    CAIRN_S3_FORCE_PATH_STYLE: 'true',
    CAIRN_METRICS_PORT: '0',
    ...env,
  };
  const config = loadConfig(
    {
      dataDir,
      apiPort: 0,
      viewerPort: 0,
      contentPort: 0,
      logLevel: process.env.CAIRN_FAULT_LOG_LEVEL ?? 'silent',
      sweepIntervalSeconds: 0,
    },
    fullEnv,
  );
  const logs: FaultStack['logs'] = [];
  const log = (level: string) => (obj: object, msg?: string) => logs.push({ level, obj, ...(msg ? { msg } : {}) });
  const server = await startServer(config, {
    env: fullEnv,
    log: { info: log('info'), warn: log('warn'), error: log('error') },
    ...(clock ? { clock } : {}),
  });
  const key = (await server.core.tenants.create('faults', 'pro')).apiKey;
  return {
    server,
    apiUrl: server.config.apiOrigin,
    metricsUrl: `http://127.0.0.1:${server.config.metricsPort}`,
    key,
    pg,
    redis,
    s3,
    logs,
    async close() {
      await server.close().catch(() => {});
      await Promise.allSettled([pg.close(), redis.close(), s3.close()]);
      await rm(dataDir, { recursive: true, force: true });
    },
  } satisfies FaultStack;
}
