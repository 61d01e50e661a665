import { createHmac, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { FanoutAbuseSink, LogAbuseSink, WebhookAbuseSink } from './adapters/abuse/index.js';
import { HttpWebhookSender } from './adapters/webhook-sender/http-webhook-sender.js';
import type { Config } from './config.js';
import type { CoreObserver, Logger, Origins } from './core/context.js';
import { type Core, createCore } from './core/index.js';
import { UrlSigner } from './core/signing.js';
import type { AbuseSink } from './ports/abuse-sink.js';
import type { AccountStore } from './ports/account-store.js';
import type { BlobStore } from './ports/blob-store.js';
import { type Clock, systemClock } from './ports/clock.js';
import type { MetadataStore } from './ports/metadata-store.js';
import type { RateLimiter } from './ports/rate-limiter.js';
import type { ResumableUploadStore } from './ports/resumable-upload-store.js';

export interface Adapters {
  store: MetadataStore;
  /** Users, sessions and OAuth state, provided by the metadata store's adapter over the same database. */
  accounts: AccountStore;
  /** Resumable uploads' state, provided by the metadata store's adapter over the same database. */
  resumables: ResumableUploadStore;
  blobs: BlobStore;
  limiter: RateLimiter;
  abuse: AbuseSink;
}

export const consoleLogger: Logger = {
  info: (obj, msg) => console.error(JSON.stringify({ level: 'info', msg, ...obj })),
  warn: (obj, msg) => console.error(JSON.stringify({ level: 'warn', msg, ...obj })),
  error: (obj, msg) =>
    console.error(JSON.stringify({ level: 'error', msg, ...obj, err: String((obj as { err?: unknown }).err ?? '') })),
};

/**
 * Picks the adapters the configuration asks for, each independently: any mix works (SQLite + S3,
 * PostgreSQL + the local folder, …). The embedded default needs no server at all. Abuse reports
 * are written to `operatorLog` (stderr by default), and queued for the webhook when one is set.
 * Each adapter's module is imported only when the configuration picks it: the AWS SDK, pg and
 * ioredis together take about a second to load, which every `cairn admin` command and embedded
 * start would pay, and an instance on PostgreSQL and S3 loads no SQLite.
 */
export async function createAdapters(
  config: Config,
  log: Logger,
  operatorLog: Writable = process.stderr,
): Promise<Adapters> {
  mkdirSync(config.dataDir, { recursive: true });
  const sinks: AbuseSink[] = [new LogAbuseSink(operatorLog)];
  if (config.abuseWebhookUrl)
    sinks.push(new WebhookAbuseSink(config.abuseWebhookUrl, (problem) => log.warn({ problem }, 'abuse webhook')));
  const store = await createMetadataStore(config);
  return {
    store,
    accounts: store.accounts,
    resumables: store.resumables,
    blobs: await createBlobStore(config),
    limiter: await createRateLimiter(config, log),
    abuse: sinks.length === 1 ? (sinks[0] as AbuseSink) : new FanoutAbuseSink(sinks),
  };
}

/**
 * Closes every adapter, each even when another fails to. What stays open (a socket to Redis,
 * PostgreSQL's pool or its LISTEN connection) would keep the process from exiting.
 */
async function closeAdapters(adapters: Adapters): Promise<void> {
  const { abuse, limiter, blobs, store } = adapters;
  await Promise.allSettled([abuse.close?.(), limiter.close(), blobs.close(), store.close()]);
}

export async function createMetadataStore(
  config: Config,
): Promise<MetadataStore & { accounts: AccountStore; resumables: ResumableUploadStore }> {
  if (!config.databaseUrl) {
    const { SqliteMetadataStore } = await import('./adapters/sqlite/index.js');
    return new SqliteMetadataStore({ path: path.join(config.dataDir, 'cairn.sqlite') });
  }
  const { PostgresMetadataStore } = await import('./adapters/postgres/index.js');
  return new PostgresMetadataStore({
    connectionString: config.databaseUrl,
    statementTimeoutMs: config.databaseStatementTimeoutSeconds * 1000,
    connectTimeoutMs: config.databaseConnectTimeoutSeconds * 1000,
    maxWaiting: config.databaseMaxWaiting,
    ...(config.databaseSchema ? { schema: config.databaseSchema } : {}),
  });
}

async function createBlobStore(config: Config): Promise<BlobStore> {
  // The configuration refuses `s3` without a bucket; the second test only tells the compiler.
  if (config.blobBackend === 'fs' || !config.s3Bucket) {
    const { FsBlobStore } = await import('./adapters/fs-blobs/fs-blob-store.js');
    return new FsBlobStore({ root: path.join(config.dataDir, 'blobs') });
  }
  const { S3BlobStore } = await import('./adapters/s3-blobs/index.js');
  return new S3BlobStore({
    bucket: config.s3Bucket,
    ...(config.s3Endpoint ? { endpoint: config.s3Endpoint } : {}),
    ...(config.s3Region ? { region: config.s3Region } : {}),
    ...(config.s3Prefix ? { prefix: config.s3Prefix } : {}),
    forcePathStyle: config.s3ForcePathStyle,
  });
}

async function createRateLimiter(config: Config, log: Logger): Promise<RateLimiter> {
  if (!config.redisUrl) {
    const { MemoryRateLimiter } = await import('./adapters/memory-limiter/memory-rate-limiter.js');
    return new MemoryRateLimiter();
  }
  const { RedisRateLimiter } = await import('./adapters/redis-limiter/index.js');
  return new RedisRateLimiter({
    url: config.redisUrl,
    ...(config.redisPrefix ? { keyPrefix: config.redisPrefix } : {}),
    onOutage: (event, err) =>
      event === 'lost'
        ? log.warn({ err: String(err) }, 'Redis unreachable: rate limits are enforced per instance until it is back')
        : log.info({}, 'Redis reachable again: rate limits are shared across instances'),
  });
}

export function originsOf(config: Config): Origins {
  return {
    api: config.apiOrigin,
    viewer: config.viewerOrigin,
    content: config.contentOrigin,
    download: config.downloadOrigin,
  };
}

export interface RuntimeOptions {
  clock?: Clock;
  log?: Logger;
  adapters?: Adapters;
  /** Where abuse reports are written as JSON lines; default stderr. */
  operatorLog?: Writable;
  /** Told of the core's countable events (the metrics). */
  observer?: CoreObserver;
  /** Where the core reads its origins; default the configured ones (see BoundOrigins for serve's). */
  origins?: Origins;
}

/**
 * Builds the core over migrated, initialised adapters. The signing secret comes from the config,
 * else from the store (generated once, shared by every instance on the same store).
 */
export async function createRuntime(
  config: Config,
  opts: RuntimeOptions = {},
): Promise<{ core: Core; adapters: Adapters; close: () => Promise<void> }> {
  const log = opts.log ?? consoleLogger;
  const adapters = opts.adapters ?? (await createAdapters(config, log, opts.operatorLog));
  let secret: string;
  try {
    await adapters.store.migrate();
    await adapters.blobs.init();
    secret =
      config.secret ?? (await adapters.store.getOrSetSetting('signing_secret', randomBytes(32).toString('base64url')));
  } catch (err) {
    // A dependency that cannot be reached fails the start; what the start opened goes with it, so
    // the process exits (a `cairn admin` run, or `cairn serve` for its supervisor to restart).
    if (!opts.adapters) await closeAdapters(adapters);
    throw err;
  }
  const derive = (label: string) => createHmac('sha256', secret).update(label).digest('base64url');
  const { store, resumables, blobs, limiter, abuse } = adapters;
  const core = createCore({
    // One adapter object serves every metadata port; each service sees only the ones it names.
    tenantStore: store,
    artifactStore: store,
    sharingStore: store,
    sweeperStore: store,
    eventStore: store,
    webhookStore: store,
    mcpSessionStore: store,
    webhookSender: new HttpWebhookSender({
      allowPrivate: config.webhookAllowPrivateAddresses,
      timeoutMs: config.webhookTimeoutSeconds * 1000,
      maxResponseBytes: 64 * 1024,
      maxRedirects: 3,
    }),
    webhookAllowPrivate: config.webhookAllowPrivateAddresses,
    webhookTimeoutMs: config.webhookTimeoutSeconds * 1000,
    resumables,
    blobs,
    limiter,
    abuse,
    clock: opts.clock ?? systemClock,
    signer: new UrlSigner(derive('url-signing')),
    tokenSecret: derive('content-token'),
    origins: opts.origins ?? originsOf(config),
    upgradeUrl: config.upgradeUrl,
    directDownloads: config.s3DirectDownloads,
    maxUploadsPerTenant: config.maxUploadsPerTenant,
    eventRetentionMs: config.eventRetentionSeconds * 1000,
    maxEventStreamsPerTenant: config.maxEventStreamsPerTenant,
    log,
    ...(opts.observer ? { observer: opts.observer } : {}),
  });
  const close = async () => {
    core.eventHub.close();
    await core.deliverer?.stop();
    await core.sweeper.stop();
    // The last counts reach the store before it closes.
    await core.requests.stop().catch((err: unknown) => log.error({ err }, 'request counts not written'));
    await adapters.abuse.close?.();
    await adapters.limiter.close();
    await adapters.blobs.close();
    await adapters.store.close();
  };
  return { core, adapters, close };
}
