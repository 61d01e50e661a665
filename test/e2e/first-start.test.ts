import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runToExit, spawnServe } from '../helpers/process.js';
import { api } from '../helpers/server.js';

/**
 * The default tenant's key is printed once, on the first start of an empty data folder. Local
 * only: it reads the SQLite file of a `cairn serve` child (the e2e-scaleout run would repeat it).
 */
const localOnly = describe.skipIf(process.env.CAIRN_TEST_BACKEND === 'scaleout');

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

/** A port some other program holds. */
async function busyPort(): Promise<number> {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise<void>((resolve) => holder.close(() => resolve())));
  return (holder.address() as net.AddressInfo).port;
}

const serveToExit = (env: Record<string, string>) => runToExit(['serve'], env);

localOnly('first start', () => {
  it('a start that cannot bind its ports creates nothing; the next start creates "default" and prints its key', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-first-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    // The content port is bound last, so the API and viewer listeners were already up when it fails.
    const failed = await serveToExit({
      CAIRN_DATA_DIR: dataDir,
      CAIRN_API_PORT: '0',
      CAIRN_VIEWER_PORT: '0',
      CAIRN_CONTENT_PORT: String(await busyPort()),
      CAIRN_LOG_LEVEL: 'silent',
    });
    expect(failed.code, failed.stderr).toBe(1);
    // The listener and the setting that moves it, in one line instead of a raw EADDRINUSE.
    expect(failed.stderr).toMatch(
      /^error: the content listener cannot use port \d+ on 127\.0\.0\.1: another program is listening there\. .*CAIRN_CONTENT_PORT \(or --content-port\)\.\n$/,
    );
    expect(`${failed.stdout}${failed.stderr}`).not.toMatch(/ak_live_/);
    const db = new Database(path.join(dataDir, 'cairn.sqlite'), { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM tenants').get()).toEqual({ n: 0 });
      expect(db.prepare('SELECT count(*) AS n FROM api_keys').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }

    const ok = await spawnServe(dataDir);
    cleanup.push(async () => {
      await ok.stop();
    });
    expect(ok.apiKey).toMatch(/^ak_live_[A-Za-z0-9]{32}$/);
    expect(ok.banner).toMatch(/First start: created tenant "default"/);
    const who = await api(ok.apiUrl, ok.apiKey, 'GET', '/v1/whoami');
    expect(who.status).toBe(200);
    expect(who.json.tenant_name).toBe('default');
    expect((await ok.stop()).code).toBe(0);
  });
});

describe('settings that cannot be used', () => {
  it('a busy viewer port names the viewer listener and CAIRN_VIEWER_PORT', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-busy-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const r = await serveToExit({
      CAIRN_DATA_DIR: dataDir,
      CAIRN_API_PORT: '0',
      CAIRN_VIEWER_PORT: String(await busyPort()),
      CAIRN_CONTENT_PORT: '0',
      CAIRN_LOG_LEVEL: 'silent',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the viewer listener cannot use port \d+ .*CAIRN_VIEWER_PORT/);
  });

  it('a bad number names the variable (or the flag) and its value, and exits 2; a secret is never echoed', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-bad-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await serveToExit({ CAIRN_DATA_DIR: dataDir, CAIRN_API_PORT: 'abc' });
    expect(port.code).toBe(2);
    expect(port.stderr).toBe('error: Invalid configuration: CAIRN_API_PORT="abc": not a number\n');
    const idle = await serveToExit({ CAIRN_DATA_DIR: dataDir, CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS: '1.5' });
    expect(idle.code).toBe(2);
    expect(idle.stderr).toMatch(/CAIRN_UPLOAD_IDLE_TIMEOUT_SECONDS="1\.5": /);
    const secret = await serveToExit({ CAIRN_DATA_DIR: dataDir, CAIRN_SECRET: 'hunter2-short' });
    expect(secret.code).toBe(2);
    expect(secret.stderr).toMatch(/CAIRN_SECRET: /);
    expect(secret.stderr).not.toContain('hunter2');
  });
});
