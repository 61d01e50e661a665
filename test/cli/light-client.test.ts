import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The client side is light: `cairn --version`, `--help`, every client command, `cairn mcp` and the
 * SDK load no module of the server (the core, adapters, HTTP, runtime, config) and none of the
 * server's dependencies (Fastify, pg, ioredis, the AWS SDK, SQLite, argon2, the renderers, TypeBox).
 * Each run of the real binary writes the modules it loaded (test/helpers/module-log.mjs).
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const HOOK = path.join(ROOT, 'test/helpers/module-log.mjs');

const DIST = `file://${ROOT}/dist/`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const SERVER_MODULE = new RegExp(
  `^${DIST}((core|adapters|http|ports|wire|metrics)/|(runtime|server|config|readiness|bound-origins)\\.js$|` +
    'cli/(admin-actions|admin-migrate|admin-users|json-error)\\.js$)|' +
    '/node_modules/(fastify|@fastify|pg|pg-[a-z-]+|ioredis|@aws-sdk|@smithy|better-sqlite3|@node-rs|highlight\\.js|markdown-it|prom-client|@sinclair|pino)/',
);
/** fetch's HTTP stack: loading it costs a process about as much CPU as starting Node. */
const FETCH_STACK = 'internal:internal/deps/undici/undici';

let srv: TestServer;
let work: string;

beforeAll(async () => {
  srv = await startTestServer();
  work = await mkdtemp(path.join(tmpdir(), 'cairn-light-'));
  await writeFile(path.join(work, 'note.md'), '# light\n');
});
afterAll(async () => {
  await srv?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const env = (log: string) =>
  childEnv({
    CAIRN_TEST_MODULE_LOG: log,
    CAIRN_API_KEY: srv.apiKey,
    CAIRN_API_URL: srv.apiUrl,
    CAIRN_CONFIG_DIR: path.join(work, 'config'),
  });

let runs = 0;
const logFile = () => path.join(work, `modules-${++runs}.txt`);
const loaded = async (log: string) => (await readFile(log, 'utf8')).split('\n');

/** The modules `cairn <args>` loaded (it must succeed). */
async function modulesOf(args: string[]): Promise<string[]> {
  const log = logFile();
  await run(process.execPath, ['--import', HOOK, BIN, ...args], { cwd: work, env: env(log) });
  return loaded(log);
}

describe('the client side loads no server module', () => {
  it.each([
    [['--version']],
    [['--help']],
    [['help', 'push']],
    [['ls', '--help']],
    [['ls', '--limit', '5']],
    [['ls', '--json']],
    [['push', 'note.md', '--session', 'light', '--json']],
    [['whoami']],
    [['sessions']],
    [['capture', 'codex', '--help']],
    [['capture', 'gemini', '--help']],
    [['watch', '--after', 'evt_0000000000000000', '--count', '1', '--json']],
  ])('cairn %j', async (args) => {
    const modules = await modulesOf(args);
    expect(modules.length).toBeGreaterThan(3);
    expect(modules.filter((m) => SERVER_MODULE.test(m))).toEqual([]);
  });

  it('cairn --version, and cairn ls, load neither commands nor fetch', async () => {
    const version = await modulesOf(['--version']);
    expect(
      version.filter((m) => m.includes('/commander/') || (m.includes('/dist/cli/') && !m.endsWith('/cli/start.js'))),
    ).toEqual([]);
    expect(version).not.toContain(FETCH_STACK);
    const ls = await modulesOf(['ls', '--limit', '5']);
    expect(ls).not.toContain(FETCH_STACK);
    // Only the module of its own word: no other command's definitions.
    expect(
      ls.filter((m) =>
        /\/dist\/cli\/(serve|admin|mcp)\.js|\/dist\/cli\/client\/(push|capture[a-z-]*|codex-rollout|gemini-chat)\.js/.test(
          m,
        ),
      ),
    ).toEqual([]);
  });

  it('cairn mcp, through a real MCP client: initialize, tools/list, a read and a store', async () => {
    const log = logFile();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', HOOK, BIN, 'mcp'],
      cwd: work,
      env: env(log),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'light-host', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.length).toBeGreaterThan(5);
      const who = await client.callTool({ name: 'whoami', arguments: {} });
      expect(who.isError, JSON.stringify(who)).toBeFalsy();
      const stored = await client.callTool({
        name: 'store_artifact',
        arguments: { path: 'note.md', filename: 'note.md' },
      });
      expect(stored.isError, JSON.stringify(stored)).toBeFalsy();
    } finally {
      await client.close();
    }
    await expect
      .poll(() =>
        readFile(log, 'utf8').then(
          () => true,
          () => false,
        ),
      )
      .toBe(true);
    const modules = await loaded(log);
    expect(modules.some((m) => m.includes('@modelcontextprotocol/sdk'))).toBe(true);
    expect(modules.filter((m) => SERVER_MODULE.test(m))).toEqual([]);
    // Started as MCP hosts start it, it skips the command line's parser too.
    expect(modules.filter((m) => m.includes('/commander/'))).toEqual([]);
  });

  it('the SDK package loads nothing but its own files and Node builtins, uploads and downloads included', async () => {
    const log = logFile();
    const script = path.join(work, 'sdk-script.mjs');
    const out = path.join(work, 'downloaded.md');
    await writeFile(
      script,
      `import { CairnClient } from ${JSON.stringify(path.join(ROOT, 'packages/sdk/dist/index.js'))};
       const c = new CairnClient({ apiKey: process.env.CAIRN_API_KEY, baseUrl: process.env.CAIRN_API_URL });
       const rec = await c.uploadFile(${JSON.stringify(path.join(work, 'note.md'))}, { sessionId: 'light-sdk' });
       await c.uploadBytes('x', { filename: 'x.txt' });
       await c.uploadResumable(${JSON.stringify(path.join(work, 'note.md'))}, { filename: 'tus.md' });
       await c.listArtifacts({ sessionId: 'light-sdk' });
       await c.downloadToFile(rec.artifact_id, ${JSON.stringify(out)});`,
    );
    await run(process.execPath, ['--import', HOOK, script], { cwd: work, env: env(log) });
    expect(await readFile(out, 'utf8')).toBe('# light\n');
    const files = (await loaded(log)).filter((m) => m.startsWith('file:'));
    const sdkDist = `file://${path.join(ROOT, 'packages/sdk/dist')}/`;
    expect(files.filter((f) => !f.startsWith(sdkDist) && f !== `file://${script}` && !f.endsWith(HOOK))).toEqual([]);
  });
});
