import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type RunningServer, startServer } from '../../src/server.js';
import { eventually, expectError, sha256, stagingFiles } from '../helpers/e2e.js';
import { BIN, childEnv, spawnServe } from '../helpers/process.js';
import { rawConnect } from '../helpers/raw-http.js';
import { api } from '../helpers/server.js';

/** `cairn admin` and `cairn serve` as subprocesses on a temporary data folder. */

let dataDir: string;
let server: RunningServer;
let apiUrl: string;
const silent = { info() {}, warn() {}, error() {} };

function cairn(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: childEnv({ CAIRN_DATA_DIR: dataDir, ...env }), timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const FULL_KEY = /ak_live_[A-Za-z0-9]{32}/;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-admin-'));
  // A server on the same folder sees every change the CLI makes (the store is shared).
  server = await startServer(
    loadConfig({ dataDir, apiPort: 0, viewerPort: 0, contentPort: 0, logLevel: 'silent', sweepIntervalSeconds: 0 }, {}),
    { env: {}, log: silent },
  );
  apiUrl = server.config.apiOrigin;
});
afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('cairn admin tenant', () => {
  let acmeKey = '';

  it('create --json prints tenant_name, plan and a working api_key', async () => {
    const r = await cairn(['admin', 'tenant', 'create', 'acme', '--plan', 'pro', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({
      tenant_name: 'acme',
      plan: 'pro',
      api_key: expect.stringMatching(/^ak_live_[A-Za-z0-9]{32}$/),
    });
    acmeKey = out.api_key;
    const who = await api(apiUrl, acmeKey, 'GET', '/v1/whoami');
    expect(who.status).toBe(200);
    expect(who.json).toMatchObject({ tenant_name: 'acme', plan: 'pro', api_key_last_4: acmeKey.slice(-4) });
  });

  it('create (human) defaults to free and prints the key once; a taken name fails with exit 1', async () => {
    const r = await cairn(['admin', '--data', dataDir, 'tenant', 'create', 'beta']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Created tenant beta \(free\)/);
    const key = FULL_KEY.exec(r.stdout)?.[0] ?? '';
    expect((await api(apiUrl, key, 'GET', '/v1/whoami')).json.plan).toBe('free');
    const dup = await cairn(['admin', 'tenant', 'create', 'beta']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/error: .+/);
    const bad = await cairn(['admin', 'tenant', 'create', 'Bad Name!']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/error: .+/);
  });

  it('list shows tenants with plan and status (human and --json)', async () => {
    const json = await cairn(['admin', 'tenant', 'list', '--json']);
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
    // 'default' was made by the server's first start on this folder.
    expect(rows.map((t) => t.tenant_name).sort()).toEqual(['acme', 'beta', 'default']);
    expect(rows.find((t) => t.tenant_name === 'acme')).toMatchObject({
      plan: 'pro',
      suspended: false,
      usage_storage_bytes: 0,
    });
    const human = await cairn(['admin', 'tenant', 'list']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/TENANT_NAME\s+PLAN\s+SUSPENDED/);
    expect(human.stdout).toMatch(/^acme\s+pro\s+false/m);
    expect(human.stdout).toMatch(/^beta\s+free\s+false/m);
  });

  it('set-plan moves a tenant between plans, visible to the API at once', async () => {
    const r = await cairn(['admin', 'tenant', 'set-plan', 'beta', 'pro']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/beta is now on the pro plan/);
    const rows = JSON.parse((await cairn(['admin', 'tenant', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(rows.find((t) => t.tenant_name === 'beta')?.plan).toBe('pro');
    const back = await cairn(['admin', 'tenant', 'set-plan', 'beta', 'free']);
    expect(back.code).toBe(0);
  });

  it('suspend refuses the tenant’s calls with 401 unauthorized naming the suspension; unsuspend lifts it', async () => {
    const r = await cairn(['admin', 'tenant', 'suspend', 'acme']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/acme is suspended/);
    const refused = await api(apiUrl, acmeKey, 'GET', '/v1/whoami');
    expectError(refused, 401, 'unauthorized');
    expect(refused.json.error.message).toMatch(/suspended/);
    // The client CLI says the account is suspended, not that the key is wrong.
    const who = await cairn(['whoami'], { CAIRN_API_KEY: acmeKey, CAIRN_API_URL: apiUrl });
    expect(who.code).toBe(1);
    expect(who.stderr).toMatch(/error: unauthorized: .*suspended/);
    expect(who.stderr).toMatch(/hint: the key is valid, but its account is suspended/);
    expect(who.stderr).not.toMatch(/cairn login/);
    const rows = JSON.parse((await cairn(['admin', 'tenant', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(rows.find((t) => t.tenant_name === 'acme')?.suspended).toBe(true);
    const u = await cairn(['admin', 'tenant', 'unsuspend', 'acme']);
    expect(u.code).toBe(0);
    expect(u.stdout).toMatch(/acme is active/);
    expect((await api(apiUrl, acmeKey, 'GET', '/v1/whoami')).status).toBe(200);
  });

  it('a bad plan is a usage error (exit 2); an unknown tenant is exit 1 with a message', async () => {
    for (const args of [
      ['admin', 'tenant', 'create', 'gamma', '--plan', 'gold'],
      ['admin', 'tenant', 'set-plan', 'acme', 'enterprise'],
    ]) {
      const r = await cairn(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/plan must be free or pro/);
    }
    const rows = JSON.parse((await cairn(['admin', 'tenant', 'list', '--json'])).stdout) as Record<string, unknown>[];
    expect(rows.map((t) => t.tenant_name)).not.toContain('gamma');
    expect(rows.find((t) => t.tenant_name === 'acme')?.plan).toBe('pro');
    for (const args of [
      ['admin', 'tenant', 'set-plan', 'nobody', 'pro'],
      ['admin', 'tenant', 'suspend', 'nobody'],
      ['admin', 'tenant', 'unsuspend', 'nobody'],
      ['admin', 'key', 'create', 'nobody'],
      ['admin', 'key', 'list', 'nobody'],
      ['admin', 'key', 'revoke', 'nobody', 'key_AAAAAAAAAAAAAAAA'],
    ]) {
      const r = await cairn(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(/nobody/);
    }
    // Missing arguments are usage errors too.
    expect((await cairn(['admin', 'tenant', 'create'])).code).toBe(2);
  });
});

describe('cairn admin key', () => {
  it('create, list (last 4 only), revoke by id and by full key; revoked keys are refused', async () => {
    const created = await cairn(['admin', 'key', 'create', 'acme', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { tenant_name, api_key: second } = JSON.parse(created.stdout);
    expect(tenant_name).toBe('acme');
    expect((await api(apiUrl, second, 'GET', '/v1/whoami')).json.api_key_last_4).toBe(second.slice(-4));
    const human = await cairn(['admin', 'key', 'create', 'acme']);
    expect(human.code).toBe(0);
    const third = FULL_KEY.exec(human.stdout)?.[0] ?? '';
    expect((await api(apiUrl, third, 'GET', '/v1/whoami')).status).toBe(200);

    const listed = await cairn(['admin', 'key', 'list', 'acme', '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(FULL_KEY);
    const keys = JSON.parse(listed.stdout) as { key_id: string; last_4: string; revoked_at: string | null }[];
    expect(keys).toHaveLength(3);
    for (const k of keys) {
      expect(Object.keys(k).sort()).toEqual(['created_at', 'key_id', 'last_4', 'revoked_at']);
      expect(k.key_id).toMatch(/^key_[A-Za-z0-9]{16}$/);
      expect(k.last_4).toHaveLength(4);
      expect(k.revoked_at).toBeNull();
    }
    expect(keys.map((k) => k.last_4)).toContain(second.slice(-4));
    const humanList = await cairn(['admin', 'key', 'list', 'acme']);
    expect(humanList.stdout).toMatch(/KEY_ID\s+LAST_4/);
    expect(humanList.stdout).not.toMatch(FULL_KEY);
    expect(humanList.stdout).not.toContain(second.slice(8, 28));

    const target = keys.find((k) => k.last_4 === second.slice(-4));
    const revoked = await cairn(['admin', 'key', 'revoke', 'acme', target?.key_id ?? '']);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(/revoked/i);
    expectError(await api(apiUrl, second, 'GET', '/v1/whoami'), 401, 'unauthorized');
    const again = await cairn(['admin', 'key', 'revoke', 'acme', target?.key_id ?? '']);
    expect(again.code).toBe(1);

    const byKey = await cairn(['admin', 'key', 'revoke', 'acme', third]);
    expect(byKey.code, byKey.stderr).toBe(0);
    expectError(await api(apiUrl, third, 'GET', '/v1/whoami'), 401, 'unauthorized');
    // A key of another tenant cannot be revoked through this one.
    const betaKey = JSON.parse((await cairn(['admin', 'key', 'create', 'beta', '--json'])).stdout).api_key;
    expect((await cairn(['admin', 'key', 'revoke', 'acme', betaKey])).code).toBe(1);
    expect((await api(apiUrl, betaKey, 'GET', '/v1/whoami')).status).toBe(200);

    const after = JSON.parse((await cairn(['admin', 'key', 'list', 'acme', '--json'])).stdout) as {
      revoked_at: string | null;
    }[];
    expect(after.filter((k) => k.revoked_at !== null)).toHaveLength(2);
  });

  it('the plan caps active keys (10 on free): the 11th is refused with exit 1', async () => {
    const created = await cairn(['admin', 'tenant', 'create', 'capped', '--json']);
    expect(created.code).toBe(0);
    for (let i = 0; i < 9; i++) expect((await cairn(['admin', 'key', 'create', 'capped', '--json'])).code).toBe(0);
    const over = await cairn(['admin', 'key', 'create', 'capped']);
    expect(over.code).toBe(1);
    expect(over.stderr).toMatch(/quota_exceeded/);
  }, 60_000);
});

describe('cairn admin page', () => {
  // Six runs of the CLI, each a fresh Node process: slow on a busy machine.
  it('unpublish takes any tenant’s page down for good; restore lets the owner publish again', async () => {
    const { apiKey } = await server.core.tenants.create('pages-co', 'pro');
    const up = await api(apiUrl, apiKey, 'POST', '/v1/artifacts', {
      filename: 'r.md',
      content: Buffer.from('# hi').toString('base64'),
    });
    const id = up.json.artifact_id;
    const publish = () => api(apiUrl, apiKey, 'POST', `/v1/artifacts/${id}/publish`, { visibility: 'unlisted' });
    const slug = (await publish()).json.page_id;
    expect(await server.core.pages.resolve(slug)).not.toBeNull();
    const r = await cairn(['admin', 'page', 'unpublish', slug, '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      page_id: slug,
      unpublished: true,
      taken_down: true,
      tenant_name: 'pages-co',
    });
    expect(await server.core.pages.resolve(slug)).toBeNull();
    expect((await api(apiUrl, apiKey, 'GET', `/v1/artifacts/${id}`)).json.page).toBeNull();

    // The owner cannot bring it back, by publishing again or by unpublish + publish.
    expectError(await publish(), 403, 'page_taken_down');
    expect((await api(apiUrl, apiKey, 'DELETE', `/v1/artifacts/${id}/publish`)).status).toBe(200);
    expectError(await publish(), 403, 'page_taken_down');
    expect(await server.core.pages.resolve(slug)).toBeNull();
    const again = await cairn(['admin', 'page', 'unpublish', slug]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`Page ${slug} \\(tenant pages-co\\) is taken down`));

    const restored = await cairn(['admin', 'page', 'restore', slug, '--json']);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toEqual({
      page_id: slug,
      taken_down: false,
      live: false,
      tenant_name: 'pages-co',
    });
    // Restoring publishes nothing by itself; the owner's next publish does, with the same slug.
    expect(await server.core.pages.resolve(slug)).toBeNull();
    const back = await publish();
    expect(back.status, back.text).toBe(200);
    expect(back.json.page_id).toBe(slug);
    expect(await server.core.pages.resolve(slug)).not.toBeNull();
    const human = await cairn(['admin', 'page', 'restore', slug]);
    expect(human.stdout).toMatch(/is no longer taken down/);

    for (const verb of ['unpublish', 'restore']) {
      const missing = await cairn(['admin', 'page', verb, 'pg_AAAAAAAAAAAAAAAA']);
      expect(missing.code, verb).toBe(1);
      expect(missing.stderr).toContain('no page pg_AAAAAAAAAAAAAAAA');
    }
  }, 90_000);
});

describe('cairn admin beside a running server', () => {
  it('leaves the server’s uploads in flight alone: they finish and store every byte', async () => {
    const created = await cairn(['admin', 'tenant', 'create', 'beside', '--plan', 'pro', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout).api_key as string;
    // Half of the file is sent, then the upload waits (well within the idle limit) while the admin
    // commands run, however long a loaded machine makes them take.
    const content = randomBytes(1024 * 1024);
    const boundary = 'besideBoundary';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="in-flight.bin"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const conn = await rawConnect(apiUrl);
    try {
      conn.write(
        `POST /v1/artifacts HTTP/1.1\r\nHost: ${new URL(apiUrl).host}\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\n` +
          `Content-Length: ${head.length + content.length + tail.length}\r\n\r\n`,
      );
      conn.write(Buffer.concat([head, content.subarray(0, content.length / 2)]));
      await eventually(async () => (await stagingFiles(dataDir)).length === 1, 10_000, 'a staged upload');
      // Every admin command opens the blob folder; each used to empty its staging folder.
      for (const args of [
        ['tenant', 'list'],
        ['sweep', '--json'],
      ]) {
        const r = await cairn(['admin', ...args]);
        expect(r.code, r.stderr).toBe(0);
      }
      expect(await stagingFiles(dataDir)).toHaveLength(1);
      conn.write(Buffer.concat([content.subarray(content.length / 2), tail]));
      await eventually(() => /\r\n\r\n\{[\s\S]*\}$/.test(conn.received()), 10_000, 'the answer');
      expect(conn.received()).toMatch(/^HTTP\/1\.1 201 /);
      const record = JSON.parse(conn.received().slice(conn.received().indexOf('\r\n\r\n') + 4));
      expect(record.content_hash).toBe(sha256(content));
    } finally {
      conn.destroy();
    }
  }, 60_000);
});

describe('cairn admin --json failures', () => {
  it('print the error envelope as one line on stderr, nothing on stdout', async () => {
    const cases: [string[], number, string][] = [
      [['admin', 'key', 'create', 'nobody', '--json'], 1, 'invalid_request'],
      [['admin', 'tenant', 'create', 'gamma', '--plan', 'gold', '--json'], 2, 'invalid_request'],
      [['admin', 'tenant', 'create', 'Not A Name', '--json'], 1, 'invalid_request'],
      [['admin', 'page', 'unpublish', 'pg_AAAAAAAAAAAAAAAA', '--json'], 1, 'artifact_not_found'],
      // 'capped' holds its ten keys since the key-cap test above.
      [['admin', 'key', 'create', 'capped', '--json'], 1, 'quota_exceeded'],
    ];
    for (const [args, code, errorCode] of cases) {
      const r = await cairn(args);
      const what = args.join(' ');
      expect(r.code, what).toBe(code);
      expect(r.stdout, what).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines, what).toHaveLength(1);
      const body = JSON.parse(lines[0] as string);
      expect(Object.keys(body), what).toEqual(['error']);
      expect(body.error, what).toMatchObject({ code: errorCode, message: expect.any(String) });
      expect(body.error.status, what).toEqual(expect.any(Number));
    }
  });
});

describe('cairn serve', () => {
  it('writes its logs to stderr and only the banner to stdout', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cairn-serve-logs-'));
    try {
      const p = await spawnServe(dir, { CAIRN_LOG_LEVEL: 'info' });
      expect((await p.stop()).code).toBe(0);
      expect(p.stdout()).toMatch(/^Cairn is running\./);
      expect(p.stdout()).not.toMatch(/^\{/m);
      const logs = p
        .stderr()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l));
      expect(logs.filter((l) => /Server listening/.test(l.msg))).toHaveLength(3);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('prints the key, the three URLs and a curl line on first start only', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'cairn-serve-'));
    try {
      const first = await spawnServe(dir);
      expect(first.apiKey).toMatch(/^ak_live_[A-Za-z0-9]{32}$/);
      expect(first.banner).toMatch(/API\s+http:\/\/127\.0\.0\.1:\d+/);
      expect(first.banner).toMatch(/Viewer\s+http:\/\/localhost:\d+/);
      expect(first.banner).toMatch(/Content\s+http:\/\/127\.0\.0\.1:\d+/);
      expect(first.banner).toContain(`curl -H "Authorization: Bearer ${first.apiKey}"`);
      expect(first.banner).toContain(`${first.apiUrl}/v1/artifacts`);
      expect((await api(first.apiUrl, first.apiKey, 'GET', '/v1/whoami')).json).toMatchObject({
        tenant_name: 'default',
        plan: 'free',
      });
      expect((await fetch(`${first.viewerUrl}/health`)).status).toBe(200);
      expect((await fetch(`${first.contentUrl}/health`)).status).toBe(200);
      expect((await first.stop()).code).toBe(0);

      const second = await spawnServe(dir);
      expect(second.apiKey).toBeNull();
      expect(second.banner).not.toMatch(/ak_live_/);
      expect(second.banner).not.toMatch(/curl/);
      expect((await api(second.apiUrl, first.apiKey, 'GET', '/v1/whoami')).status).toBe(200);
      expect((await second.stop()).code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('exits 0 on a SIGTERM sent the moment its banner appears (three at once)', async () => {
    // The handlers must be in place before the banner announces readiness; a loaded machine
    // lets the reader of the banner signal before the next line of the server has run. Three
    // starts at once load both cores: each costs 2 to 4 s of CPU here (imports, then compiling
    // every route's schemas when the API listener gets ready), and six at once, beside the
    // suite's other workers, no longer fitted the start's 20 s on a slow day.
    const dirs = await Promise.all(Array.from({ length: 3 }, () => mkdtemp(path.join(tmpdir(), 'cairn-sig-'))));
    try {
      const exits = await Promise.all(dirs.map(async (d) => (await spawnServe(d)).stop()));
      expect(exits).toEqual(dirs.map(() => ({ code: 0, signal: null })));
    } finally {
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    }
  }, 60_000);

  it('a bad configuration is a usage error (exit 2)', async () => {
    const r = await cairn(['serve', '--api-port', 'not-a-port']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--api-port="not-a-port": not a number/);
  });
});
