import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { newArtifactId } from '../../src/core/ids.js';
import type { ArtifactRow, MetadataStore } from '../../src/ports/metadata-store.js';
import { createRuntime } from '../../src/runtime.js';
import { DAY_MS, eventually, put } from '../helpers/e2e.js';
import { BIN, childEnv, type ServeProcess, spawnServe } from '../helpers/process.js';
import { api } from '../helpers/server.js';

/**
 * The sweeper in real processes: a `cairn admin sweep` SIGKILLed in the middle of a large expiry
 * and run again, and the interval inside `cairn serve`. Local only: they watch and check the
 * SQLite file (the sweeper's steps have the same shape on PostgreSQL, whose batches the contract
 * suite covers).
 */
const localOnly = describe.skipIf(process.env.CAIRN_TEST_BACKEND === 'scaleout');
const run = promisify(execFile);
const silentLog = { info() {}, warn() {}, error() {} };

const dirs: string[] = [];
const procs: ServeProcess[] = [];
afterAll(async () => {
  for (const p of procs) await p.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const DUE = 2000;
const SHARED = 200;
const DELETED = 200;
const hash = (s: string) => createHash('sha256').update(s).digest('hex');

/** Pins and inserts, as an upload does; `deletedAt` then soft-deletes it at that time. */
async function seed(store: MetadataStore, row: ArtifactRow, deletedAt?: number): Promise<void> {
  const pin = await store.pinBlob(row.tenantId, row.contentHash, row.sizeBytes, row.createdAt, {
    owner: 'test',
    until: Number.MAX_SAFE_INTEGER,
  });
  expect(['write', 'stored']).toContain(pin);
  expect((await store.insertArtifact({ artifact: row, storageLimitBytes: Number.MAX_SAFE_INTEGER })).kind).toBe(
    'created',
  );
  if (deletedAt !== undefined) await store.softDeleteArtifact(row.tenantId, row.id, deletedAt);
}

localOnly('cairn admin sweep, killed for real', () => {
  it('SIGKILL mid-expiry leaves whole batches; the next run finishes and every count is exact', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-sweepkill-'));
    dirs.push(dataDir);
    const now = Date.now();
    const runtime = await createRuntime(loadConfig({ dataDir, logLevel: 'silent' }, {}), { log: silentLog });
    const { store } = runtime.adapters;
    const { tenant } = await runtime.core.tenants.create('sweep-kill', 'pro');
    const row = (i: string, over: Partial<ArtifactRow>): ArtifactRow => ({
      id: newArtifactId(),
      tenantId: tenant.id,
      filename: `${i}.txt`,
      contentType: 'text/plain',
      sizeBytes: 100,
      contentHash: hash(i),
      metadata: {},
      sessionId: null,
      agentId: null,
      createdAt: now - 2 * DAY_MS,
      expiresAt: null,
      deletedAt: null,
      status: 'active',
      ...over,
    });
    // Due: expired a day ago, not yet swept; pairs share their bytes, and the first SHARED hashes
    // are also held by a live artifact, so only those bytes must stay counted.
    const sizeOf = (k: number) => 100 + k;
    for (let i = 0; i < DUE; i++) {
      const k = i % (DUE / 2);
      await seed(store, row(`blob-${k}`, { sizeBytes: sizeOf(k), sessionId: `s${i % 10}`, expiresAt: now - DAY_MS }));
    }
    for (let k = 0; k < SHARED; k++) {
      await seed(store, row(`blob-${k}`, { sizeBytes: sizeOf(k), sessionId: `s${k % 10}` }));
    }
    // Soft-deleted 40 days ago: to be hard-deleted.
    for (let i = 0; i < DELETED; i++) await seed(store, row(`gone-${i}`, {}), now - 40 * DAY_MS);
    await runtime.close();

    const db = new Database(path.join(dataDir, 'cairn.sqlite'), { readonly: true });
    try {
      const count = (status: string) =>
        (db.prepare('SELECT count(*) AS n FROM artifacts WHERE status = ?').get(status) as { n: number }).n;
      expect(count('active')).toBe(DUE + SHARED);

      // The sweeper expires in batches of 500, each its own transaction: kill it between two.
      const child = spawn(process.execPath, [BIN, 'admin', '--data', dataDir, 'sweep', '--json'], {
        env: childEnv({ CAIRN_LOG_LEVEL: 'silent' }),
        stdio: 'ignore',
      });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_c, sig) => resolve(sig)));
      let seen = 0;
      const deadline = Date.now() + 60_000;
      while (seen === 0 && Date.now() < deadline && child.exitCode === null) {
        seen = count('expired');
        if (seen === 0) await new Promise((r) => setTimeout(r, 2));
      }
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      const expiredBeforeKill = count('expired');
      expect(expiredBeforeKill, 'the kill came after the whole expiry step').toBeLessThan(DUE);
      expect(expiredBeforeKill).toBeGreaterThan(0);
      // Whole batches only, and nothing of the later steps.
      expect(expiredBeforeKill % 500).toBe(0);
      expect(count('deleted')).toBe(DELETED);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');

      const second = await run(process.execPath, [BIN, 'admin', '--data', dataDir, 'sweep', '--json'], {
        env: childEnv({ CAIRN_LOG_LEVEL: 'silent' }),
        timeout: 60_000,
      });
      const report = JSON.parse(second.stdout.trim());
      expect(report.expired).toBe(DUE - expiredBeforeKill);
      expect(report.purged).toBe(DELETED);
      expect(count('expired')).toBe(DUE);
      expect(count('active')).toBe(SHARED);
      expect(count('deleted')).toBe(0);

      // The accounting: storage is exactly the live shared bytes, and every counter matches the rows.
      let sharedBytes = 0;
      for (let k = 0; k < SHARED; k++) sharedBytes += sizeOf(k);
      const storage = db.prepare('SELECT storage_bytes AS n FROM tenants WHERE id = ?').get(tenant.id);
      expect(storage).toEqual({ n: sharedBytes });
      /** Rows of `table` whose `counter` differs from the active artifacts that share its `key`. */
      const countersOff = (table: string, counter: string, key: string) =>
        db
          .prepare(
            `SELECT count(*) AS n FROM ${table} AS x WHERE x.${counter} != (SELECT count(*) FROM artifacts AS a
               WHERE a.tenant_id = x.tenant_id AND a.${key} = x.${key} AND a.status = 'active')`,
          )
          .get();
      expect(countersOff('blobs', 'live_refs', 'content_hash')).toEqual({ n: 0 });
      expect(countersOff('sessions', 'artifact_count', 'session_id')).toEqual({ n: 0 });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  }, 180_000);
});

localOnly('the sweeper inside cairn serve', () => {
  it('runs on its interval: an artifact past its TTL is marked expired and its link dropped, unasked', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-sweepserve-'));
    dirs.push(dataDir);
    const p = await spawnServe(dataDir, { CAIRN_SWEEP_INTERVAL_SECONDS: '1' });
    procs.push(p);
    const key = p.apiKey;
    if (!key) throw new Error(`no key printed:\n${p.banner}`);
    const a = await put(p.apiUrl, key, 'short-lived', { ttl: '2s' });
    const link = await api(p.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {});
    expect(link.status, link.text).toBe(201);

    // Only the file is watched from here on: API reads would expire the artifact themselves.
    const db = new Database(path.join(dataDir, 'cairn.sqlite'), { readonly: true });
    try {
      const status = () =>
        (db.prepare('SELECT status FROM artifacts WHERE id = ?').get(a.artifact_id) as { status: string }).status;
      const links = () => (db.prepare('SELECT count(*) AS n FROM links').get() as { n: number }).n;
      expect(status()).toBe('active');
      expect(links()).toBe(1);
      await eventually(() => status() === 'expired', 15_000, 'the sweeper to expire the artifact');
      expect(links()).toBe(0);
    } finally {
      db.close();
    }
    expect((await p.stop()).code).toBe(0);
  }, 60_000);
});
