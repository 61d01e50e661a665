import { execFile } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { filesUnder, localBlobNames } from '../helpers/server.js';
import { faultTestsRunnable } from './services.js';
import { expectNothingLost, Traffic } from './traffic.js';

/** The embedded default on a 32 MiB tmpfs that fills up under traffic, then gets space back. */
const run = promisify(execFile);
const runnable = faultTestsRunnable(
  'test/faults/disk-full.test.ts',
  process.platform !== 'linux' || process.getuid?.() !== 0 ? 'mounting a small tmpfs needs Linux and root' : null,
);

let dir: string;
let mounted = false;
let server: RunningServer;
let key: string;
const silent = { info() {}, warn() {}, error() {} };

/** Writes `file` until the file system refuses with ENOSPC (big chunks, then small ones). */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const size of [1024 * 1024, 4096, 512]) {
      const chunk = Buffer.alloc(size, 1);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

describe.runIf(runnable)('disk full (embedded default)', () => {
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cairn-fault-disk-'));
    await run('mount', ['-t', 'tmpfs', '-o', 'size=32m', 'tmpfs', dir]);
    mounted = true;
    const data = path.join(dir, 'data');
    const env = { CAIRN_METRICS_PORT: '0' };
    server = await startServer(
      loadConfig(
        { dataDir: data, apiPort: 0, viewerPort: 0, contentPort: 0, logLevel: 'silent', sweepIntervalSeconds: 0 },
        env,
      ),
      { env, log: silent },
    );
    key = (await server.core.tenants.create('disk', 'pro')).apiKey;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    if (mounted) await run('umount', ['-l', dir]);
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 60_000);

  it('uploads get 507 (nothing half-written), reads go on, and uploads work again once space is freed', async () => {
    const api = server.config.apiOrigin;
    const filler = path.join(dir, 'filler');
    const t = new Traffic(api, key, { refusals: [503, 507] }).start();
    try {
      await t.until(() => t.stored.size >= 10, '10 uploads before the disk fills');
      fillUp(filler);
      const full = t.counts.byStatus.get(507) ?? 0;
      const ok = t.counts.ok;
      await t.until(
        () => (t.counts.byStatus.get(507) ?? 0) >= full + 10 && t.counts.ok >= ok + 20,
        'uploads refused with 507 while reads and lists go on',
      );
      await rm(filler);
      const stored = t.stored.size;
      await t.until(() => t.stored.size >= stored + 10, 'uploads once space is freed');
    } finally {
      await t.stop();
    }
    expect(t.violations).toEqual([]);
    await expectNothingLost(api, key, t);

    const root = path.join(dir, 'data', 'blobs');
    expect(await filesUnder(path.join(root, '.staging'))).toEqual([]);
    // Every stored blob has its row: a live artifact's, or one the sweeper finds and removes.
    const db = new Database(path.join(dir, 'data', 'cairn.sqlite'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const rows = new Set(
        (
          db.prepare('SELECT tenant_id, content_hash FROM blobs').all() as { tenant_id: string; content_hash: string }[]
        ).map((r) => `${r.tenant_id}/${r.content_hash}`),
      );
      const blobs = (await localBlobNames(root)).map((name) => {
        const [tenant, , hash] = name.split('/');
        return `${tenant}/${hash ?? ''}`;
      });
      expect(blobs.filter((b) => !rows.has(b))).toEqual([]);
    } finally {
      db.close();
    }
    const metrics = await (await fetch(`http://127.0.0.1:${server.config.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/cairn_dependency_failures_total\{dependency="disk"\} [1-9]/);
  }, 180_000);
});
