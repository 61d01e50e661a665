import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { LogAbuseSink } from '../../src/adapters/abuse/index.js';
import { FsBlobStore } from '../../src/adapters/fs-blobs/fs-blob-store.js';
import { MemoryRateLimiter } from '../../src/adapters/memory-limiter/memory-rate-limiter.js';
import { SqliteMetadataStore } from '../../src/adapters/sqlite/index.js';
import { loadConfig } from '../../src/config.js';
import { newArtifactId } from '../../src/core/ids.js';
import type { Core } from '../../src/core/index.js';
import type { PlanName } from '../../src/core/plans.js';
import { LIMITS } from '../../src/core/plans.js';
import type { Caller } from '../../src/core/tenants.js';
import type { UploadRequest, UploadResult } from '../../src/core/upload.js';
import type { AbuseReport } from '../../src/ports/abuse-sink.js';
import { ManualClock } from '../../src/ports/clock.js';
import { type Adapters, createRuntime } from '../../src/runtime.js';
import type { ArtifactRecord } from '../../src/wire/index.js';

/**
 * The core over real adapters that need no server: SQLite in memory, a blob folder of its own,
 * the in-memory rate limiter, and a manual clock. What `cairn serve` builds, without listeners,
 * so the rules are tested where they live (the core) in milliseconds; the wire, the processes
 * and the browsers keep their own tests in test/e2e and beyond.
 *
 *   const h = await coreHarness();
 *   const alice = await h.tenant('alice', 'free');
 *   const rec = await h.upload(alice, 'hello', { filename: 'a.txt', sessionId: 'run-1' });
 *   h.clock.advance(31 * DAY_MS);
 *   await h.close();
 */

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
/** 2026-11-01T00:00:00Z: a fixed start, so dates in assertions are readable. */
export const START = Date.UTC(2026, 10, 1);

const silent = { info() {}, warn() {}, error() {} };

/** RFC 3339 with milliseconds, as records carry timestamps. */
export const iso = (ms: number) => new Date(ms).toISOString();

/** The code of the error `p` rejects with, or `'ok'`: for tables of refusals. */
export const codeOf = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (err: { code?: string }) => err.code ?? String(err),
  );

/** An artifact id a caller cannot read, and the code every read of it answers. */
export interface Unreadable {
  why: 'unknown' | 'another tenant’s' | 'soft-deleted' | 'expired';
  id: string;
  code: 'artifact_not_found' | 'artifact_already_deleted' | 'artifact_expired';
}

export interface CoreHarness {
  core: Core;
  adapters: Adapters;
  clock: ManualClock;
  /** The blob folder (`<dir>/blobs`). */
  dir: string;
  /** The abuse reports forwarded to the operators so far (the operator log, parsed), oldest first. */
  reports: AbuseReport[];
  /** A new tenant and its first key, as a request's caller. */
  tenant(name: string, plan?: PlanName): Promise<Caller & { apiKey: string }>;
  /**
   * An active artifact of `sizeBytes` recorded straight in the store, with no bytes behind it:
   * what fills a tenant's storage up to a limit without writing gigabytes.
   */
  fill(caller: Caller, sizeBytes: number, name?: string): Promise<void>;
  /**
   * One artifact id for each way `caller` cannot read one: unknown, another tenant's (both
   * `artifact_not_found`), soft-deleted and past its TTL (410s). Moves the clock on an hour.
   */
  unreadable(caller: Caller): Promise<Unreadable[]>;
  /** The caller of `tenant` as the store has it now (its usage counters are fresh). */
  refresh(caller: Caller): Promise<Caller>;
  /**
   * An upload through the core as the API's JSON upload runs it (replay, precheck, stage, finish):
   * the record the API would answer. `filename` defaults to `file.txt`.
   */
  upload(
    caller: Caller,
    content: string | Buffer,
    req?: UploadRequest & { idempotencyKey?: string },
  ): Promise<ArtifactRecord>;
  /** upload(), with the status and whether it was a replay. */
  uploadResult(
    caller: Caller,
    content: string | Buffer,
    req?: UploadRequest & { idempotencyKey?: string },
  ): Promise<UploadResult & { record: ArtifactRecord }>;
  close(): Promise<void>;
}

export async function coreHarness(opts: { start?: number; env?: Record<string, string> } = {}): Promise<CoreHarness> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-core-'));
  const clock = new ManualClock(opts.start ?? START);
  const config = loadConfig({ dataDir: dir, logLevel: 'silent', sweepIntervalSeconds: 0 }, opts.env ?? {});
  const store = new SqliteMetadataStore({ path: ':memory:' });
  const reports: AbuseReport[] = [];
  // The operator log the LogAbuseSink writes: one JSON line per report.
  const operatorLog = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        const { kind: _kind, ...report } = JSON.parse(line) as AbuseReport & { kind: string };
        reports.push(report);
      }
      done();
    },
  });
  const adapters: Adapters = {
    store,
    accounts: store.accounts,
    resumables: store.resumables,
    blobs: new FsBlobStore({ root: path.join(dir, 'blobs') }),
    limiter: new MemoryRateLimiter(),
    abuse: new LogAbuseSink(operatorLog),
  };
  const runtime = await createRuntime(config, { adapters, clock, log: silent });
  const { core } = runtime;

  const refresh = async (caller: Caller): Promise<Caller> => {
    const tenant = await core.deps.tenantStore.getTenant(caller.tenant.id);
    if (!tenant) throw new Error(`no tenant ${caller.tenant.id}`);
    return { ...caller, tenant };
  };

  const uploadResult: CoreHarness['uploadResult'] = async (caller, content, { idempotencyKey, ...fields } = {}) => {
    const req: UploadRequest = { filename: 'file.txt', ...fields };
    const { uploads } = core;
    let result: UploadResult | null = await uploads.replay(caller, idempotencyKey);
    if (!result) {
      await uploads.precheck(caller, req);
      const bytes = typeof content === 'string' ? Buffer.from(content) : content;
      const staged = await uploads.stage(Readable.from([bytes]), LIMITS.jsonDecodedBytes);
      result = await uploads.finish(caller, req, staged, idempotencyKey);
    }
    return { ...result, record: JSON.parse(result.body) as ArtifactRecord };
  };

  const tenant: CoreHarness['tenant'] = async (name, plan = 'pro') => {
    const { apiKey } = await core.tenants.create(name, plan);
    return { ...(await core.tenants.authenticate(apiKey)), apiKey };
  };
  const upload: CoreHarness['upload'] = async (caller, content, req = {}) =>
    (await uploadResult(caller, content, req)).record;

  return {
    core,
    adapters,
    clock,
    dir,
    reports,
    tenant,
    refresh,
    upload,
    async fill(caller, sizeBytes, name = 'filler') {
      const hash = createHash('sha256').update(`${caller.tenant.id} ${name}`).digest('hex');
      const now = clock.now();
      const { artifactStore } = core.deps;
      await artifactStore.pinBlob(caller.tenant.id, hash, sizeBytes, now, { owner: 'fill', until: now + 60_000 });
      await artifactStore.insertArtifact({
        artifact: {
          id: newArtifactId(),
          tenantId: caller.tenant.id,
          filename: `${name}.bin`,
          contentType: 'application/octet-stream',
          sizeBytes,
          contentHash: hash,
          metadata: {},
          sessionId: null,
          agentId: null,
          createdAt: now,
          expiresAt: now + 30 * DAY_MS,
          deletedAt: null,
          status: 'active',
        },
        storageLimitBytes: Number.MAX_SAFE_INTEGER,
      });
    },
    uploadResult,
    async unreadable(caller) {
      const theirs = await upload(await tenant(`other-${randomUUID().slice(0, 8)}`), 'theirs');
      const deleted = await upload(caller, 'deleted');
      const expired = await upload(caller, 'expired', { ttl: '1h' });
      await core.artifacts.softDelete(caller, deleted.artifact_id);
      clock.advance(HOUR_MS);
      return [
        { why: 'unknown', id: 'art_0000000000000000', code: 'artifact_not_found' },
        { why: 'another tenant’s', id: theirs.artifact_id, code: 'artifact_not_found' },
        { why: 'soft-deleted', id: deleted.artifact_id, code: 'artifact_already_deleted' },
        { why: 'expired', id: expired.artifact_id, code: 'artifact_expired' },
      ];
    },
    async close() {
      await runtime.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
