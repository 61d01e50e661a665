import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHostStartsCairn } from '../helpers/mcp-host.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * How a newcomer gets Cairn: the SDK package (`cairn-store-sdk`) packed with `npm pack` and
 * installed into a project of its own, where it is the one package added; the server and CLI
 * package (`cairn-store`, since `cairn` on the registry is someone else's), which carries the SDK
 * and re-exports it; and the `cairn` command put on the PATH with `npm link`, which the MCP host
 * snippets of docs/mcp.md then start exactly as written.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
// The npm beside the node running the tests (Node 24 under scripts/with-node.sh), else the PATH's.
const besideNode = path.join(path.dirname(process.execPath), 'npm');
const NPM = existsSync(besideNode) ? besideNode : 'npm';

let srv: TestServer;
let scratch: string;

beforeAll(async () => {
  srv = await startTestServer();
  // Inside the checkout, so the unpacked package finds its dependencies in its node_modules.
  await mkdir(path.join(ROOT, 'test-output'), { recursive: true });
  scratch = await mkdtemp(path.join(ROOT, 'test-output', 'install-'));
});
afterAll(async () => {
  await srv?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('the package', { timeout: 120_000 }, () => {
  it('is cairn-store with the bin cairn, in package.json and the lockfile alike', async () => {
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    const lock = JSON.parse(await readFile(path.join(ROOT, 'package-lock.json'), 'utf8'));
    expect(pkg.name).toBe('cairn-store');
    expect(pkg.bin).toEqual({ cairn: 'bin/cairn.js' });
    expect(lock.name).toBe('cairn-store');
    expect(lock.packages[''].name).toBe('cairn-store');
    const doc = await readFile(path.join(ROOT, 'docs/sdk-typescript.md'), 'utf8');
    const commands = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
    expect(commands).toMatch(/npm pack -w cairn-store-sdk/);
    expect(commands).toMatch(/npm install \/path\/to\/cairn\/cairn-store-sdk-/);
    expect(commands).not.toMatch(/npm install cairn\b(?!-)/);
    expect(doc).toContain("from 'cairn-store-sdk'");
  });

  it('the SDK packs alone and installs as one package with no dependencies, outside any checkout', async () => {
    const sdkPkg = JSON.parse(await readFile(path.join(ROOT, 'packages/sdk/package.json'), 'utf8'));
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies']) {
      expect(sdkPkg[field], field).toBeUndefined();
    }
    const { stdout } = await run(NPM, ['pack', '-w', 'cairn-store-sdk', '--json', '--pack-destination', scratch], {
      cwd: ROOT,
    });
    const [packed] = JSON.parse(stdout) as { name: string; filename: string; files: { path: string }[] }[];
    expect(packed?.name).toBe('cairn-store-sdk');
    expect(
      packed?.files.map((f) => f.path).filter((f) => !/^(dist\/|README\.md$|LICENSE$|package\.json$)/.test(f)),
    ).toEqual([]);
    // A project in the system's temp folder: nothing of the checkout's node_modules can be found from it.
    const project = await mkdtemp(path.join(tmpdir(), 'cairn-sdk-project-'));
    try {
      await writeFile(path.join(project, 'package.json'), '{"name":"my-agent","type":"module","private":true}');
      await run(NPM, ['install', '--offline', '--no-audit', '--no-fund', path.join(scratch, packed?.filename ?? '')], {
        cwd: project,
      });
      const lock = JSON.parse(await readFile(path.join(project, 'package-lock.json'), 'utf8'));
      expect(Object.keys(lock.packages).filter((k) => k !== '')).toEqual(['node_modules/cairn-store-sdk']);
      expect(await readdir(path.join(project, 'node_modules'))).toEqual(expect.arrayContaining(['cairn-store-sdk']));
      const script = `
        import { CairnClient } from 'cairn-store-sdk';
        const c = new CairnClient({ apiKey: process.argv[1], baseUrl: process.argv[2] });
        console.log(JSON.stringify(await c.whoami()));`;
      const sdk = await run(process.execPath, ['--input-type=module', '-e', script, srv.apiKey, srv.apiUrl], {
        cwd: project,
      });
      expect(JSON.parse(sdk.stdout).tenant_name).toBe('main');
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it('cairn-store packed with npm pack, carrying the SDK: the SDK imports by either name and the cairn bin runs', async () => {
    // dist/ is built before the tests, so the pack skips `prepare` (the build) here.
    const { stdout } = await run(NPM, ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch], {
      cwd: ROOT,
    });
    const [packed] = JSON.parse(stdout) as { name: string; filename: string; files: { path: string }[] }[];
    expect(packed?.name).toBe('cairn-store');
    expect(packed?.files.map((f) => f.path)).toContain('node_modules/cairn-store-sdk/dist/index.js');
    const project = path.join(scratch, 'project');
    const into = path.join(project, 'node_modules', 'cairn-store');
    await mkdir(into, { recursive: true });
    await writeFile(path.join(project, 'package.json'), '{"name":"my-agent","type":"module","private":true}');
    await run('tar', ['-xzf', path.join(scratch, packed?.filename ?? ''), '-C', into, '--strip-components=1']);
    const script = `
      import { CairnClient } from 'cairn-store';
      import { CairnClient as Same } from './node_modules/cairn-store/node_modules/cairn-store-sdk/dist/index.js';
      const c = new CairnClient({ apiKey: process.argv[1], baseUrl: process.argv[2] });
      console.log(JSON.stringify({ ...(await c.whoami()), same: CairnClient === Same }));`;
    const sdk = await run(process.execPath, ['--input-type=module', '-e', script, srv.apiKey, srv.apiUrl], {
      cwd: project,
    });
    expect(JSON.parse(sdk.stdout)).toMatchObject({ tenant_name: 'main', same: true });
    const version = await run(process.execPath, [path.join(into, 'bin', 'cairn.js'), '--version'], { cwd: project });
    expect(version.stdout.trim()).toBe(JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')).version);
  });
});

describe('cairn on the PATH', { timeout: 120_000 }, () => {
  let bin: string;
  let home: string;

  beforeAll(async () => {
    // npm link into a private prefix: the same as the README's `npm link`, without touching the machine's.
    const prefix = path.join(scratch, 'prefix');
    await run(NPM, ['link', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], {
      cwd: ROOT,
      env: { ...process.env, npm_config_prefix: prefix },
    });
    bin = path.join(prefix, 'bin');
    home = path.join(scratch, 'home');
    await mkdir(home, { recursive: true });
  });

  const hostEnv = (extra: Record<string, string> = {}) => ({
    HOME: home,
    PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
    ...extra,
  });

  it('after npm link, `cairn` runs by name', async () => {
    const r = await run('cairn', ['--version'], { env: hostEnv() });
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it("every host snippet in docs/mcp.md starts as written (placeholders filled) and lists Cairn's tools", async () => {
    const doc = await readFile(path.join(ROOT, 'docs/mcp.md'), 'utf8');
    const snippets = [...doc.matchAll(/```json\n([\s\S]*?)```/g)]
      .map((m) => JSON.parse(m[1] ?? '{}'))
      .map((j) => j.mcpServers?.cairn)
      .filter((s) => s?.command);
    expect(snippets.length).toBeGreaterThanOrEqual(2);
    // Snippets without env rely on `cairn login`, as the page says.
    await run('cairn', ['login', '--key', srv.apiKey, '--url', srv.apiUrl], { env: hostEnv() });
    const fill = (v: string) =>
      v
        .replace(/ak_live_X+/, srv.apiKey)
        .replace('http://127.0.0.1:8080', srv.apiUrl)
        .replace(/^\/Users\/me\//, `${home}/`);
    for (const s of snippets as { command: string; args: string[]; env?: Record<string, string> }[]) {
      const args = s.args.map(fill);
      for (const a of args) if (a.startsWith(home)) await mkdir(a, { recursive: true });
      const env = Object.fromEntries(Object.entries(s.env ?? {}).map(([k, v]) => [k, fill(v)]));
      await expectHostStartsCairn({ command: s.command, args, env: hostEnv(env) }, 'snippet-host');
    }
  });
});
