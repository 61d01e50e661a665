import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { WebUser } from '../helpers/hosted.js';
import { BIN, childEnv } from '../helpers/process.js';

/** `cairn admin user create` as a subprocess on a data folder a running server shares. */

let dataDir: string;
let server: RunningServer;

function cairn(args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: childEnv({ CAIRN_DATA_DIR: dataDir }), timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-admin-user-'));
  server = await startServer(
    loadConfig({ dataDir, apiPort: 0, viewerPort: 0, contentPort: 0, logLevel: 'silent', sweepIntervalSeconds: 0 }, {}),
    { env: {}, log: { info() {}, warn() {}, error() {} } },
  );
});
afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('cairn admin user create', () => {
  it('--create-tenant --password-stdin --json: the user can log in to the dashboard of that tenant', async () => {
    const r = await cairn(
      [
        'admin',
        'user',
        'create',
        'Ops@Example.com',
        '--tenant',
        'ops',
        '--create-tenant',
        '--plan',
        'pro',
        '--password-stdin',
        '--json',
      ],
      'a long enough password\n',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ email: 'ops@example.com', tenant_name: 'ops', plan: 'pro' });
    const web = new WebUser(server.config.apiOrigin);
    await web.logIn('ops@example.com', 'a long enough password');
    const overview = await web.request('GET', '/dashboard');
    expect(overview.text).toContain('data-plan>Pro<');
  });

  it('attaches to an existing tenant; without --password-stdin a password is generated and shown once', async () => {
    const r = await cairn(['admin', 'user', 'create', 'second@example.com', '--tenant', 'ops']);
    expect(r.code, r.stderr).toBe(0);
    const password = /shown only once:\n\s+(\S+)/.exec(r.stdout)?.[1] ?? '';
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    const web = new WebUser(server.config.apiOrigin);
    await web.logIn('second@example.com', password);
    expect((await web.request('GET', '/dashboard')).text).toContain('second@example.com · ops');
  });

  it('refuses an unknown tenant without --create-tenant, a taken email, and a bad plan', async () => {
    const unknown = await cairn(['admin', 'user', 'create', 'x@example.com', '--tenant', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/--create-tenant/);
    const taken = await cairn(['admin', 'user', 'create', 'OPS@example.com', '--tenant', 'ops']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/already exists/);
    const plan = await cairn([
      'admin',
      'user',
      'create',
      'y@example.com',
      '--tenant',
      'z',
      '--create-tenant',
      '--plan',
      'gold',
    ]);
    expect(plan.code).toBe(2);
  });
});
