import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A client process ends when its work does: no socket, timer or handle outlives its last call.
 * The server keeps idle connections open for 72 s (Fastify's keep-alive timeout), so a client that
 * left one referenced would sit there that long after printing its result, as every large
 * `cairn push` did. Each process here must exit within a few seconds of its last output.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Far below the server's 72 s keep-alive, far above a process's own exit on a busy machine. */
const EXIT_BOUND_MS = 5_000;
/** Past this the process is taken to hang, and killed. */
const GIVE_UP_MS = 20_000;

let srv: TestServer;
let work: string;
let big: string;

beforeAll(async () => {
  srv = await startTestServer();
  work = await mkdtemp(path.join(tmpdir(), 'cairn-exit-'));
  big = path.join(work, 'big.bin');
  await writeFile(big, randomBytes(3 * 1024 * 1024));
});
afterAll(async () => {
  await srv?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) =>
  childEnv({
    CAIRN_API_KEY: srv.apiKey,
    CAIRN_API_URL: srv.apiUrl,
    CAIRN_CONFIG_DIR: path.join(work, 'config'),
    ...extra,
  });

/** Waits for `child` to exit; how long after `since()` (its last output, say) it did. */
function exitAfter(child: ChildProcess, since: () => number): Promise<{ code: number | null; lateMs: number }> {
  return new Promise((resolve, reject) => {
    const killer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`still running ${GIVE_UP_MS} ms after its work was done`));
    }, GIVE_UP_MS);
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, lateMs: Date.now() - since() });
    });
  });
}

/** Runs a process to its end; how long it took to exit after its last byte of output. */
async function exitAfterLastOutput(command: string, args: string[], extraEnv: Record<string, string> = {}) {
  const child = spawn(command, args, { cwd: work, env: env(extraEnv), stdio: ['ignore', 'pipe', 'pipe'] });
  let last = Date.now();
  let out = '';
  const seen = (d: Buffer) => {
    last = Date.now();
    out += d.toString();
  };
  child.stdout?.on('data', seen);
  child.stderr?.on('data', seen);
  const exit = await exitAfter(child, () => last);
  return { ...exit, out };
}

describe('client processes exit when their work is done', () => {
  it('cairn push of a file over the resumable threshold (tus PATCHes answered 204)', async () => {
    const r = await exitAfterLastOutput(process.execPath, [BIN, 'push', big, '--json'], {
      CAIRN_RESUMABLE_THRESHOLD_BYTES: String(1024 * 1024),
    });
    expect(r.code, r.out).toBe(0);
    expect(JSON.parse(r.out.slice(r.out.indexOf('{'))).size_bytes).toBe(3 * 1024 * 1024);
    expect(r.lateMs).toBeLessThan(EXIT_BOUND_MS);
  });

  it('cairn ls', async () => {
    const r = await exitAfterLastOutput(process.execPath, [BIN, 'ls', '--limit', '5']);
    expect(r.code, r.out).toBe(0);
    expect(r.lateMs).toBeLessThan(EXIT_BOUND_MS);
  });

  it('a script on the SDK: resumable upload in pieces, a list, a download', async () => {
    const script = path.join(work, 'sdk.mjs');
    await writeFile(
      script,
      `import { CairnClient } from ${JSON.stringify(path.join(ROOT, 'packages/sdk/dist/index.js'))};
       const c = new CairnClient({ apiKey: process.env.CAIRN_API_KEY, baseUrl: process.env.CAIRN_API_URL });
       const rec = await c.uploadResumable(${JSON.stringify(big)}, { chunkSize: 1024 * 1024 });
       await c.listArtifacts({ limit: 5 });
       await c.downloadToFile(rec.artifact_id, ${JSON.stringify(path.join(work, 'back.bin'))});
       console.log(rec.size_bytes);`,
    );
    const r = await exitAfterLastOutput(process.execPath, [script]);
    expect(r.code, r.out).toBe(0);
    expect(r.out.trim()).toBe(String(3 * 1024 * 1024));
    expect(r.lateMs).toBeLessThan(EXIT_BOUND_MS);
  });

  it('cairn mcp, once its host closes stdin after a few calls (no signal sent)', async () => {
    const child = spawn(process.execPath, [BIN, 'mcp'], { cwd: work, env: env(), stdio: ['pipe', 'pipe', 'pipe'] });
    const answers = new Map<number, Record<string, unknown>>();
    let buffer = '';
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const msg = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if (typeof msg.id === 'number') answers.set(msg.id, msg);
      }
    });
    let id = 0;
    const call = async (method: string, params: Record<string, unknown>) => {
      const mine = ++id;
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: mine, method, params })}\n`);
      await expect.poll(() => answers.has(mine), { timeout: GIVE_UP_MS }).toBe(true);
      return answers.get(mine) as { result?: { isError?: boolean } };
    };
    await call('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'exit-host', version: '1.0.0' },
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    await call('tools/list', {});
    const stored = await call('tools/call', { name: 'store_artifact', arguments: { filename: 'a.md', text: '# a\n' } });
    expect(stored.result?.isError, JSON.stringify(stored)).toBeFalsy();
    await call('tools/call', { name: 'list_artifacts', arguments: { limit: 3 } });
    const closedAt = Date.now();
    child.stdin.end();
    const exit = await exitAfter(child, () => closedAt);
    expect(exit.code).toBe(0);
    expect(exit.lateMs).toBeLessThan(EXIT_BOUND_MS);
  });
});
