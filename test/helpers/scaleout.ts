import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { postgresUnavailable } from './postgres.js';
import { emptyPrefix, startTestS3, type TestS3 } from './test-s3.js';

/**
 * The scale-out backend for tests: PostgreSQL + Redis from CAIRN_TEST_DATABASE_URL /
 * CAIRN_TEST_REDIS_URL, and an s3rver on loopback or the S3 engine CAIRN_TEST_S3_ENDPOINT names
 * (test-s3.ts). Each {@link ScaleoutBackend} has a schema, a
 * Redis key prefix and an S3 key prefix of its own, so many servers (and files) share the three
 * services without seeing each other.
 */

/** `CAIRN_TEST_BACKEND=scaleout` runs the e2e suite on the scale-out adapters (vitest project e2e-scaleout). */
export const scaleoutRequested = () => process.env.CAIRN_TEST_BACKEND === 'scaleout';

/** Why the scale-out services cannot be used, or null when they can. */
export async function scaleoutUnavailable(): Promise<string | null> {
  const dbUrl = process.env.CAIRN_TEST_DATABASE_URL;
  const redisUrl = process.env.CAIRN_TEST_REDIS_URL;
  const postgres = await postgresUnavailable(dbUrl);
  if (postgres) return postgres;
  if (!redisUrl) return 'CAIRN_TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379)';
  const probe = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
  } catch (err) {
    return `Redis at ${redisUrl} is unreachable: ${(err as Error).message}`;
  } finally {
    probe.disconnect();
  }
  return null;
}

const BUCKET = 'cairn-e2e';

/** One S3 per worker process, started with the first backend and closed with the last. */
let shared: { s3: Promise<TestS3>; users: number } | null = null;

async function acquireS3(): Promise<TestS3> {
  shared ??= { s3: startTestS3({ buckets: [BUCKET] }), users: 0 };
  shared.users++;
  const s3 = await shared.s3;
  // The S3 adapter takes credentials from the SDK's default chain, as in production (the
  // `cairn serve` children inherit them).
  process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
  return s3;
}

async function releaseS3(): Promise<void> {
  if (!shared) return;
  const mine = shared;
  if (--mine.users > 0) return;
  shared = null;
  await (await mine.s3).close();
}

export interface ScaleoutBackend {
  /** CAIRN_* settings selecting the three adapters, for loadConfig or a `cairn` child process. */
  env: Record<string, string>;
  schema: string;
  redisPrefix: string;
  s3: TestS3;
  /** Object keys under this backend's S3 prefix (prefix removed), sorted. */
  objectKeys(): Promise<string[]>;
  /** A pool of `max` connections on the backend's schema (its search_path), for a test's own queries; end it. */
  pool(max?: number): pg.Pool;
  /** Whether any row of any table in the schema, as text, contains `text`. */
  databaseContains(text: string): Promise<boolean>;
  /** Drops the schema, deletes the Redis keys and the objects under the S3 prefix, releases the S3. */
  close(): Promise<void>;
}

export async function createScaleoutBackend(): Promise<ScaleoutBackend> {
  const dbUrl = process.env.CAIRN_TEST_DATABASE_URL;
  const redisUrl = process.env.CAIRN_TEST_REDIS_URL;
  if (!dbUrl || !redisUrl) {
    throw new Error(
      'CAIRN_TEST_BACKEND=scaleout needs CAIRN_TEST_DATABASE_URL and CAIRN_TEST_REDIS_URL ' +
        '(e.g. postgres://postgres@127.0.0.1:5432/test and redis://127.0.0.1:6379).',
    );
  }
  const id = randomBytes(6).toString('hex');
  const schema = `cairn_e2e_${id}`;
  const redisPrefix = `cairn-e2e:${id}:`;
  const s3Prefix = `e2e-${id}/`;
  const s3 = await acquireS3();
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: s3.credentials,
  });
  return {
    env: {
      CAIRN_DATABASE_URL: dbUrl,
      CAIRN_DATABASE_SCHEMA: schema,
      CAIRN_REDIS_URL: redisUrl,
      CAIRN_REDIS_PREFIX: redisPrefix,
      CAIRN_S3_BUCKET: BUCKET,
      CAIRN_S3_ENDPOINT: s3.endpoint,
      CAIRN_S3_REGION: s3.region,
      CAIRN_S3_FORCE_PATH_STYLE: 'true',
      CAIRN_S3_PREFIX: s3Prefix,
    },
    schema,
    redisPrefix,
    s3,
    async objectKeys() {
      const keys: string[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(
          new ListObjectsV2Command({
            Bucket: BUCKET,
            Prefix: s3Prefix,
            ...(ContinuationToken ? { ContinuationToken } : {}),
          }),
        );
        for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key.slice(s3Prefix.length));
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return keys.sort();
    },
    pool(max = 2) {
      return new pg.Pool({ connectionString: dbUrl, options: `-c search_path=${schema}`, max });
    },
    async databaseContains(text) {
      const db = new pg.Client({ connectionString: dbUrl });
      await db.connect();
      try {
        const tables = await db.query<{ t: string }>(
          "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
          [schema],
        );
        if (tables.rows.length === 0) throw new Error(`schema ${schema} has no tables`);
        for (const { t } of tables.rows) {
          const hit = await db.query(`SELECT 1 FROM ${schema}."${t}" AS r WHERE strpos(r::text, $1) > 0 LIMIT 1`, [
            text,
          ]);
          if (hit.rows.length > 0) return true;
        }
        return false;
      } finally {
        await db.end();
      }
    },
    async close() {
      try {
        await emptyPrefix(client, BUCKET, s3Prefix);
      } finally {
        client.destroy();
        await dropSchemaAndKeys(dbUrl, schema, redisUrl, redisPrefix);
        await releaseS3();
      }
    },
  };
}

/** What a backend leaves in PostgreSQL and Redis goes: its schema, its keys. */
async function dropSchemaAndKeys(dbUrl: string, schema: string, redisUrl: string, redisPrefix: string): Promise<void> {
  const admin = new pg.Client({ connectionString: dbUrl });
  await admin.connect();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await admin.end();
  }
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/**
 * Instances of a scale-out set in this process, each its own runtime (no state shared but the
 * backend's services), over one backend with `env` added; `close` stops them all and the backend.
 */
export async function scaleoutSet(env: Record<string, string> = {}) {
  const backend = await createScaleoutBackend();
  const servers: RunningServer[] = [];
  const dirs: string[] = [];
  const silent = { info() {}, warn() {}, error() {} };
  return {
    backend,
    servers,
    async instance() {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-set-'));
      dirs.push(dataDir);
      const all = { ...backend.env, ...env };
      const config = loadConfig(
        { dataDir, apiPort: 0, viewerPort: 0, contentPort: 0, logLevel: 'silent', sweepIntervalSeconds: 0 },
        all,
      );
      const server = await startServer(config, { env: all, log: silent });
      servers.push(server);
      return server;
    },
    async close() {
      await Promise.allSettled(servers.map((s) => s.close()));
      await backend.close();
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    },
  };
}
