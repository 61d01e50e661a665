import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_MAX_STREAMS_PER_TENANT } from './core/event-hub.js';
import { DEFAULT_MAX_UPLOADS_PER_TENANT } from './core/upload-slots.js';

/**
 * The one validated configuration of a Cairn process. Built once at start from flags and the
 * environment (flags win); nothing else reads `process.env`.
 */
const port = z.coerce.number().int().min(0).max(65535);
const origin = z
  .string()
  .url()
  .transform((s) => s.replace(/\/+$/, ''));

/** The three named ranges proxy-addr (Fastify's trustProxy) understands besides addresses. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** An IP address, an address with a CIDR prefix length (`10.0.0.0/8`, `fd00::/8`), or a range name. */
function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * Which hops may set the client address through X-Forwarded-For (Fastify's `trustProxy`):
 * `false` (none; the socket address is the client), a hop count, or the proxies' addresses.
 * Never `true`, which would trust every hop and let a client pick its own address by putting a
 * forged value at the left of the header.
 */
export type TrustProxy = false | number | string[];

const trustProxySetting = z
  .string()
  .optional()
  .transform((raw, ctx): TrustProxy => {
    const value = (raw ?? '').trim().toLowerCase();
    if (['', '0', 'false', 'no', 'off'].includes(value)) return false;
    // `1` and `true` have always meant "behind one load balancer": trust exactly that hop.
    if (['true', 'yes', 'on'].includes(value)) return 1;
    if (/^\d+$/.test(value)) {
      const hops = Number(value);
      if (hops <= 32) return hops;
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'a hop count must be at most 32' });
      return z.NEVER;
    }
    const entries = value.split(',').map((e) => e.trim());
    const bad = entries.filter((e) => !isProxyAddress(e));
    if (bad.length > 0) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message:
          'expected a hop count (1 = one load balancer) or a comma-separated list of proxy addresses/CIDRs ' +
          `(or loopback, linklocal, uniquelocal); not ${bad.map((e) => JSON.stringify(e)).join(', ')}`,
      });
      return z.NEVER;
    }
    return entries;
  });

const ConfigSchema = z
  .object({
    dataDir: z.string().min(1),
    host: z.string().min(1),
    apiPort: port,
    viewerPort: port,
    contentPort: port,
    apiOrigin: origin.optional(),
    viewerOrigin: origin.optional(),
    contentOrigin: origin.optional(),
    downloadOrigin: origin.optional(),
    /** `postgres://…` selects PostgreSQL; unset selects SQLite in the data folder. */
    databaseUrl: z.string().optional(),
    /** PostgreSQL schema to use (created if missing); default `public`. */
    databaseSchema: z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/)
      .optional(),
    /**
     * PostgreSQL bounds: a statement running longer is cancelled, a connection not had (new or
     * free in the pool) within the connect bound fails the call; both answer 503 + Retry-After.
     */
    databaseStatementTimeoutSeconds: z.coerce.number().positive().default(10),
    databaseConnectTimeoutSeconds: z.coerce.number().positive().default(5),
    /** Calls that may wait for a pooled connection at once; more are refused at once (503). */
    databaseMaxWaiting: z.coerce.number().int().min(1).default(200),
    /** Address and port of the metrics and readiness listener (off unless a port is set). */
    metricsHost: z.string().min(1).default('127.0.0.1'),
    metricsPort: port.optional(),
    redisUrl: z.string().optional(),
    redisPrefix: z.string().optional(),
    /**
     * Where the bytes live: `fs`, a folder (the data folder's `blobs/`), or `s3`, a bucket. Unset,
     * `s3` when a bucket is named, else `fs`.
     */
    blobBackend: z.enum(['fs', 's3']),
    s3Bucket: z.string().optional(),
    s3Endpoint: z.string().optional(),
    s3Region: z.string().optional(),
    s3ForcePathStyle: z.boolean().default(false),
    s3Prefix: z.string().optional(),
    /**
     * Hand out S3 presigned GETs as download URLs (bytes leave the bucket directly). Off by default:
     * such a URL stays valid until it expires even if the artifact is deleted meanwhile.
     */
    s3DirectDownloads: z.boolean().default(false),
    /** Take client IPs from X-Forwarded-For, only through these trusted hops (see TrustProxy). */
    trustProxy: trustProxySetting,
    /** HMAC secret for signed URLs and content tokens; generated and stored when unset. */
    secret: z.string().min(32).optional(),
    abuseWebhookUrl: z.string().url().optional(),
    sweepIntervalSeconds: z.coerce.number().int().min(0).default(60),
    /** How long the change feed keeps events (GET /v1/events, stream resumes); at least the 24 h of webhook retries. */
    eventRetentionSeconds: z.coerce
      .number()
      .int()
      .min(86_400)
      .default(7 * 86_400),
    /** Seconds between the heartbeats of an event stream (a comment line that keeps proxies from closing it). */
    eventHeartbeatSeconds: z.coerce.number().positive().max(300).default(15),
    /** Event streams (SSE, MCP subscriptions) one tenant may hold open on one instance. */
    maxEventStreamsPerTenant: z.coerce.number().int().min(1).default(DEFAULT_MAX_STREAMS_PER_TENANT),
    /** Whether this instance delivers webhooks (on by default; an instance with it off only records events). */
    webhookDelivery: z.boolean().default(true),
    /** Let webhooks reach private, loopback and link-local addresses (development and tests only). */
    webhookAllowPrivateAddresses: z.boolean().default(false),
    /** A delivery attempt's bound, redirects included. */
    webhookTimeoutSeconds: z.coerce.number().positive().max(60).default(10),
    /**
     * A request whose body stops arriving for this long is cut off (its connection closed, nothing
     * kept), so a stalled client cannot hold a connection, or an upload's staging file and buffers,
     * for ever; 0 turns it off. Named for uploads, where it began; it covers every body.
     */
    uploadIdleTimeoutSeconds: z.coerce.number().int().min(0).default(60),
    /**
     * Large uploads (bodies over 1 MiB) one tenant may have in flight on this instance; the next is
     * refused with 429 until one finishes (see UploadSlots). 0 turns the limit off.
     */
    maxUploadsPerTenant: z.coerce.number().int().min(0).default(DEFAULT_MAX_UPLOADS_PER_TENANT),
    /**
     * Browser origins (besides the API origin, and loopback origins on a loopback listener) whose
     * pages may call the hosted MCP endpoint, e.g. a web-based MCP client.
     */
    mcpAllowedOrigins: z.array(origin).default([]),
    /** Where a tenant is sent to lift a plan limit. */
    upgradeUrl: z.string().url().default('https://cairn.dev/pricing'),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .refine((c) => c.blobBackend !== 's3' || c.s3Bucket !== undefined, {
    path: ['blobBackend'],
    message: 'needs CAIRN_S3_BUCKET, the bucket that keeps the bytes',
  });

export type Config = z.infer<typeof ConfigSchema> & {
  apiOrigin: string;
  viewerOrigin: string;
  contentOrigin: string;
  downloadOrigin: string;
};

export interface ConfigInput {
  dataDir?: string;
  host?: string;
  apiPort?: string | number;
  viewerPort?: string | number;
  contentPort?: string | number;
  logLevel?: string;
  sweepIntervalSeconds?: string | number;
}

type Env = Record<string, string | undefined>;

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

const truthy = (v: string | undefined) => ['1', 'true', 'yes'].includes((v ?? '').trim().toLowerCase());

export class ConfigError extends Error {}

/** The command-line flag of each setting that has one (`cairn serve --help`). */
const FLAG_OF: Partial<Record<keyof ConfigInput, string>> = {
  dataDir: '--data',
  host: '--host',
  apiPort: '--api-port',
  viewerPort: '--viewer-port',
  contentPort: '--content-port',
  logLevel: '--log-level',
};

/** Settings whose value may hold a credential: a message names them without their value. */
const SECRET_VALUES = new Set(['secret', 'databaseUrl', 'redisUrl', 'abuseWebhookUrl']);

/** The name a person set a setting by: its flag when given, else its environment variable. */
export function settingName(key: string, flags: ConfigInput = {}): string {
  const flag = FLAG_OF[key as keyof ConfigInput];
  if (flag && flags[key as keyof ConfigInput] !== undefined) return flag;
  return `CAIRN_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

export function loadConfig(flags: ConfigInput, env: Env): Config {
  const raw = {
    dataDir: path.resolve(flags.dataDir ?? nonEmpty(env.CAIRN_DATA_DIR) ?? './data'),
    host: flags.host ?? nonEmpty(env.CAIRN_HOST) ?? '127.0.0.1',
    apiPort: flags.apiPort ?? nonEmpty(env.CAIRN_API_PORT) ?? 8080,
    viewerPort: flags.viewerPort ?? nonEmpty(env.CAIRN_VIEWER_PORT) ?? 8081,
    contentPort: flags.contentPort ?? nonEmpty(env.CAIRN_CONTENT_PORT) ?? 8082,
    apiOrigin: nonEmpty(env.CAIRN_API_ORIGIN),
    viewerOrigin: nonEmpty(env.CAIRN_VIEWER_ORIGIN),
    contentOrigin: nonEmpty(env.CAIRN_CONTENT_ORIGIN),
    downloadOrigin: nonEmpty(env.CAIRN_DOWNLOAD_ORIGIN),
    databaseUrl: nonEmpty(env.CAIRN_DATABASE_URL),
    databaseSchema: nonEmpty(env.CAIRN_DATABASE_SCHEMA),
    databaseStatementTimeoutSeconds: nonEmpty(env.CAIRN_DATABASE_STATEMENT_TIMEOUT_SECONDS),
    databaseConnectTimeoutSeconds: nonEmpty(env.CAIRN_DATABASE_CONNECT_TIMEOUT_SECONDS),
    databaseMaxWaiting: nonEmpty(env.CAIRN_DATABASE_MAX_WAITING),
    metricsHost: nonEmpty(env.CAIRN_METRICS_HOST),
    metricsPort: nonEmpty(env.CAIRN_METRICS_PORT),
    redisUrl: nonEmpty(env.CAIRN_REDIS_URL),
    redisPrefix: nonEmpty(env.CAIRN_REDIS_PREFIX),
    blobBackend: nonEmpty(env.CAIRN_BLOB_BACKEND) ?? (nonEmpty(env.CAIRN_S3_BUCKET) ? 's3' : 'fs'),
    s3Bucket: nonEmpty(env.CAIRN_S3_BUCKET),
    s3Endpoint: nonEmpty(env.CAIRN_S3_ENDPOINT),
    s3Region: nonEmpty(env.CAIRN_S3_REGION),
    s3ForcePathStyle: truthy(env.CAIRN_S3_FORCE_PATH_STYLE),
    s3Prefix: nonEmpty(env.CAIRN_S3_PREFIX),
    s3DirectDownloads: truthy(env.CAIRN_S3_DIRECT_DOWNLOADS),
    trustProxy: nonEmpty(env.CAIRN_TRUST_PROXY),
    secret: nonEmpty(env.CAIRN_SECRET),
    abuseWebhookUrl: nonEmpty(env.CAIRN_ABUSE_WEBHOOK_URL),
    sweepIntervalSeconds: flags.sweepIntervalSeconds ?? nonEmpty(env.CAIRN_SWEEP_INTERVAL_SECONDS),
    eventRetentionSeconds: nonEmpty(env.CAIRN_EVENT_RETENTION_SECONDS),
    eventHeartbeatSeconds: nonEmpty(env.CAIRN_EVENT_HEARTBEAT_SECONDS),
    maxEventStreamsPerTenant: nonEmpty(env.CAIRN_MAX_EVENT_STREAMS_PER_TENANT),
    webhookDelivery: !['0', 'false', 'no', 'off'].includes((env.CAIRN_WEBHOOK_DELIVERY ?? '').trim().toLowerCase()),
    webhookAllowPrivateAddresses: truthy(env.CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES),
    webhookTimeoutSeconds: nonEmpty(env.CAIRN_WEBHOOK_TIMEOUT_SECONDS),
    uploadIdleTimeoutSeconds: nonEmpty(env.CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS),
    maxUploadsPerTenant: nonEmpty(env.CAIRN_MAX_UPLOADS_PER_TENANT),
    upgradeUrl: nonEmpty(env.CAIRN_UPGRADE_URL),
    mcpAllowedOrigins: (nonEmpty(env.CAIRN_MCP_ALLOWED_ORIGINS) ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter((o) => o !== ''),
    logLevel: flags.logLevel ?? nonEmpty(env.CAIRN_LOG_LEVEL),
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const key = String(i.path[0] ?? '');
      const name = settingName(key, flags);
      const given = (raw as Record<string, unknown>)[key];
      const notNumber = i.code === z.ZodIssueCode.invalid_type && i.received === 'nan';
      const shown = SECRET_VALUES.has(key) ? name : `${name}=${JSON.stringify(given)}`;
      return `${shown}: ${notNumber ? 'not a number' : i.message}`;
    });
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const c = parsed.data;
  const contentOrigin = c.contentOrigin ?? `http://127.0.0.1:${c.contentPort}`;
  return {
    ...c,
    apiOrigin: c.apiOrigin ?? `http://127.0.0.1:${c.apiPort}`,
    viewerOrigin: c.viewerOrigin ?? `http://localhost:${c.viewerPort}`,
    contentOrigin,
    downloadOrigin: c.downloadOrigin ?? contentOrigin,
  };
}

/** With port 0 the origins are only known once the listeners are bound. */
export function withBoundPorts(
  config: Config,
  ports: { api: number; viewer: number; content: number },
  env: Env,
): Config {
  const contentOrigin = nonEmpty(env.CAIRN_CONTENT_ORIGIN) ?? `http://127.0.0.1:${ports.content}`;
  return {
    ...config,
    apiPort: ports.api,
    viewerPort: ports.viewer,
    contentPort: ports.content,
    apiOrigin: nonEmpty(env.CAIRN_API_ORIGIN) ?? `http://127.0.0.1:${ports.api}`,
    viewerOrigin: nonEmpty(env.CAIRN_VIEWER_ORIGIN) ?? `http://localhost:${ports.viewer}`,
    contentOrigin,
    downloadOrigin: nonEmpty(env.CAIRN_DOWNLOAD_ORIGIN) ?? contentOrigin,
  };
}
