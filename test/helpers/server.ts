import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import { SMALL_BLOBS_FILE } from '../../src/adapters/fs-blobs/fs-blob-store.js';
import { loadConfig } from '../../src/config.js';
import { blobKey, type Logger } from '../../src/core/context.js';
import type { Core } from '../../src/core/index.js';
import type { PlanName } from '../../src/core/plans.js';
import type { Clock } from '../../src/ports/clock.js';
import { type Adapters, createAdapters } from '../../src/runtime.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { createScaleoutBackend, type ScaleoutBackend, scaleoutRequested } from './scaleout.js';

export interface TestServer {
  apiUrl: string;
  viewerUrl: string;
  contentUrl: string;
  dataDir: string;
  /** Key of the tenant `main` (plan from the options, default pro). */
  apiKey: string;
  core: Core;
  server: RunningServer;
  /** `scaleout` with CAIRN_TEST_BACKEND=scaleout: PostgreSQL + Redis + S3 instead of the data folder. */
  backend: 'local' | 'scaleout';
  /** The CAIRN_* settings the server runs with (for a `cairn admin` child on the same stores). */
  env: Record<string, string>;
  createTenant(name: string, plan?: PlanName): Promise<string>;
  /** Stored blobs (`<tenant>/…/<sha256>`, staging excluded), on whichever blob store is in use. */
  blobFiles(): Promise<string[]>;
  /** Uploads being staged right now (or left behind). */
  stagingFiles(): Promise<string[]>;
  /** Landing objects (`uploads/<tenant>/<name>`): presigned PUTs straight to S3 and the pieces of resumable uploads. */
  landedFiles(): Promise<string[]>;
  hasBlob(tenantId: string, contentHash: string): Promise<boolean>;
  /** Whether the metadata store's files (SQLite, WAL included) or tables (PostgreSQL) hold `text` anywhere. */
  databaseContains(text: string): Promise<boolean>;
  close(): Promise<void>;
}

const silentLog = { info() {}, warn() {}, error() {} };

/** Every file below `dir` (relative paths), or [] when it does not exist. */
export async function filesUnder(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name)))
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/**
 * The blobs of a local blob folder as `<tenant>/<2 hex>/<sha256>` names, wherever each is kept:
 * a file, or a row of `small-blobs.sqlite` (read through SQLite, so the WAL counts).
 */
export async function localBlobNames(root: string): Promise<string[]> {
  const files = (await filesUnder(root)).filter((f) => !f.startsWith('.staging') && !f.startsWith(SMALL_BLOBS_FILE));
  const dbFile = path.join(root, SMALL_BLOBS_FILE);
  if (!existsSync(dbFile)) return files;
  const db = new Database(dbFile, { readonly: true });
  try {
    const keys = (db.prepare('SELECT key FROM small_blobs').all() as { key: string }[]).map(({ key }) => {
      const [tenant = '', hash = ''] = key.split('/');
      return `${tenant}/${hash.slice(0, 2)}/${hash}`;
    });
    return [...files, ...keys].sort();
  } finally {
    db.close();
  }
}

/** Where the blobs of a server live, as lists of names. */
function blobViews(dataDir: string, scaleout: ScaleoutBackend | null) {
  if (!scaleout) {
    const root = path.join(dataDir, 'blobs');
    return {
      blobFiles: () => localBlobNames(root),
      stagingFiles: () => filesUnder(path.join(root, '.staging')),
      landedFiles: async () => (await filesUnder(path.join(root, '.landing'))).map((f) => `uploads/${f}`),
    };
  }
  // S3 keys: `<tenant>/<sha256>`, `staging/<id>`, and `uploads/…` where presigned PUTs land.
  return {
    blobFiles: async () =>
      (await scaleout.objectKeys()).filter((k) => !k.startsWith('staging/') && !k.startsWith('uploads/')),
    stagingFiles: async () => (await scaleout.objectKeys()).filter((k) => k.startsWith('staging/')),
    landedFiles: async () => (await scaleout.objectKeys()).filter((k) => k.startsWith('uploads/')),
  };
}

async function sqliteContains(dataDir: string, text: string): Promise<boolean> {
  const files = (await readdir(dataDir)).filter((f) => f.startsWith('cairn.sqlite'));
  if (!files.includes('cairn.sqlite')) throw new Error(`no cairn.sqlite in ${dataDir}`);
  for (const f of files) if ((await readFile(path.join(dataDir, f))).includes(text)) return true;
  return false;
}

/**
 * A real Cairn (three listeners on loopback, ports chosen by the OS) over a fresh temp data folder;
 * with CAIRN_TEST_BACKEND=scaleout, over a fresh PostgreSQL schema, Redis prefix and S3 prefix.
 */
export async function startTestServer(
  opts: {
    plan?: PlanName;
    clock?: Clock;
    env?: Record<string, string>;
    /** The server's log (default: silent). */
    log?: Logger;
    /** The listeners' own log level (Fastify, written to stderr; default silent). */
    logLevel?: string;
    /** Where abuse reports are written as JSON lines (default: stderr). */
    operatorLog?: Writable;
    /** Wraps the real adapters the configuration selects (fault injection, see faults.ts). */
    wrapAdapters?: (adapters: Adapters) => Adapters;
    /** The API listener's port (default: one the OS picks), for a server behind a proxy that knows it. */
    apiPort?: number;
  } = {},
): Promise<TestServer> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-test-'));
  const scaleout = scaleoutRequested() ? await createScaleoutBackend() : null;
  const env = { ...scaleout?.env, ...opts.env };
  const config = loadConfig(
    {
      dataDir,
      apiPort: opts.apiPort ?? 0,
      viewerPort: 0,
      contentPort: 0,
      logLevel: opts.logLevel ?? 'silent',
      sweepIntervalSeconds: 0,
    },
    env,
  );
  let server: RunningServer;
  try {
    server = await startServer(config, {
      env,
      log: opts.log ?? silentLog,
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.operatorLog ? { operatorLog: opts.operatorLog } : {}),
      ...(opts.wrapAdapters ? { adapters: opts.wrapAdapters(await createAdapters(config, silentLog)) } : {}),
    });
  } catch (err) {
    await scaleout?.close();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const { core } = server;
  const createTenant = async (name: string, plan: PlanName = 'pro') => (await core.tenants.create(name, plan)).apiKey;
  const apiKey = await createTenant('main', opts.plan ?? 'pro');
  return {
    apiUrl: server.config.apiOrigin,
    viewerUrl: server.config.viewerOrigin,
    contentUrl: server.config.contentOrigin,
    dataDir,
    apiKey,
    core,
    server,
    backend: scaleout ? 'scaleout' : 'local',
    env,
    createTenant,
    ...blobViews(dataDir, scaleout),
    hasBlob: async (tenantId, contentHash) => (await core.deps.blobs.stat(blobKey(tenantId, contentHash))) !== null,
    databaseContains: scaleout ? (text) => scaleout.databaseContains(text) : (text) => sqliteContains(dataDir, text),
    async close() {
      await server.close();
      await scaleout?.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** fetch against the API with a key; returns status, headers and parsed JSON (or text). */
export async function api(
  base: string,
  key: string | null,
  method: string,
  pathname: string,
  body?: unknown,
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: wire JSON, checked field by field by the tests
): Promise<{ status: number; headers: Headers; json: any; text: string }> {
  const h: Record<string, string> = { ...headers };
  if (key) h.authorization = `Bearer ${key}`;
  let payload: RequestInit['body'];
  if (body instanceof FormData) payload = body;
  else if (typeof body === 'string') {
    payload = body;
    h['content-type'] ??= 'application/json';
  } else if (body !== undefined) {
    payload = JSON.stringify(body);
    h['content-type'] = 'application/json';
  }
  const res = await fetch(base + pathname, { method, headers: h, body: payload });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, json, text };
}
