import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startCairn, type Tenant } from './engine-run.js';
import { childEnv } from './ipc.js';
import { type ResultRow, ratio } from './report.js';

/**
 * What the client side costs each time it starts, and how soon a server is up, each against its
 * floor measured in the same run, the two taking turns (medians): `cairn --version` and
 * `cairn ls --limit 5` (against a running Cairn) in CPU time beside a bare `node -e 0`; `cairn mcp`
 * from spawn to its `initialize` result beside a minimal stdio server on the same MCP SDK (one
 * tool, bare-mcp-server.ts); `cairn serve` from spawn to the first 200 on `/health` beside a bare
 * Fastify answering `/health` (bare-serve.ts). CPU is each child's rusage as `wait4` reports it
 * (microseconds; GNU time prints hundredths, a step of half the ratio against `node -e 0`'s 20 ms).
 */

const ROOT = path.resolve(import.meta.dirname, '../../..');
const BIN = path.join(ROOT, 'bin/cairn.js');
const HERE = import.meta.dirname;
/** Runs a command and prints its user + system CPU from `wait4` (Python: the standard library has it). */
const RUSAGE = [
  'import os, subprocess, sys',
  'p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)',
  '_, status, r = os.wait4(p.pid, 0)',
  'print(r.ru_utime + r.ru_stime, os.waitstatus_to_exitcode(status))',
].join('\n');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const msOf = (x: number) => `${x.toFixed(x < 100 ? 1 : 0)} ms`;

/** User + system CPU of one run of `args` (node is this process's own), in ms. */
async function cpuMs(args: string[], env: Record<string, string>, _dir: string): Promise<number> {
  const out = await new Promise<string>((resolve, reject) => {
    const child = spawn('python3', ['-c', RUSAGE, process.execPath, ...args], {
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      text += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`python3 rusage exited ${code}`))));
  });
  const [cpu = Number.NaN, code = Number.NaN] = out.trim().split(' ').map(Number);
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}`);
  return cpu * 1000;
}

/** Milliseconds from spawning an MCP server (`args`) to its answer to `initialize`. */
async function mcpInitializeMs(args: string[], env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { env: childEnv(env), stdio: ['pipe', 'pipe', 'ignore'] });
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  };
  child.stdin.write(`${JSON.stringify(initialize)}\n`);
  await new Promise<void>((resolve, reject) => {
    let buffer = '';
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code} before answering`)));
    child.stdout.on('data', (d: Buffer) => {
      buffer += d.toString();
      if (buffer.includes('"id":1')) resolve();
    });
  });
  const ms = performance.now() - t0;
  child.removeAllListeners('exit');
  child.stdin.end();
  await new Promise((resolve) => child.once('exit', resolve));
  return ms;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Milliseconds from spawning a server (`args(port)`) to the first 200 on its `/health`. */
async function firstHealthMs(args: (port: number) => string[], env: Record<string, string>): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, args(port), { env: childEnv(env), stdio: 'ignore' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args(port).join(' ')} exited ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return performance.now() - t0;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
  }
}

/** `runs` turns of A then B; the median of each. */
async function alternate(runs: number, a: () => Promise<number>, b: () => Promise<number>) {
  const as: number[] = [];
  const bs: number[] = [];
  for (let i = 0; i < runs; i++) {
    as.push(await a());
    bs.push(await b());
  }
  return { a: median(as), b: median(bs) };
}

export async function startupRows(runs: number, log: (s: string) => void): Promise<ResultRow[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-bench-start-'));
  const cairn = await startCairn(path.join(dir, 'data'), {});
  try {
    const tenant = await cairn.call<Tenant>('tenant', { name: 'start', plan: 'free' });
    const client = {
      CAIRN_API_KEY: tenant.apiKey,
      CAIRN_API_URL: cairn.info.apiUrl,
      CAIRN_CONFIG_DIR: path.join(dir, 'config'),
    };
    const bare = () => cpuMs(['-e', '0'], {}, dir);
    log(`start-up: cairn --version and cairn ls against node -e 0, ${runs} turns each`);
    const version = await alternate(runs, bare, () => cpuMs([BIN, '--version'], client, dir));
    const ls = await alternate(runs, bare, () => cpuMs([BIN, 'ls', '--limit', '5'], client, dir));
    log('start-up: cairn mcp and a bare stdio MCP server to their initialize answers');
    const mcp = await alternate(
      runs,
      () => mcpInitializeMs([path.join(HERE, 'bare-mcp-server.js')], {}),
      () => mcpInitializeMs([BIN, 'mcp'], client),
    );
    log('start-up: cairn serve and a bare Fastify to their first 200 on /health');
    let serveRun = 0;
    const serve = await alternate(
      runs,
      () => firstHealthMs((port) => [path.join(HERE, 'bare-serve.js'), String(port)], {}),
      () =>
        firstHealthMs(
          (port) => [
            BIN,
            'serve',
            ...['--data', path.join(dir, `serve-${++serveRun}`), '--log-level', 'silent'],
            ...['--api-port', String(port), '--viewer-port', '0', '--content-port', '0'],
          ],
          {},
        ),
    );
    const cpuRow = (name: string, m: { a: number; b: number }, target: number): ResultRow => ({
      name,
      cairn: `${msOf(m.b)} CPU`,
      baseline: `node -e 0: ${msOf(m.a)} CPU`,
      figure: ratio(m.b / m.a),
      target: `≤ ${target}×`,
      pass: m.b / m.a <= target,
    });
    return [
      cpuRow('start-up: cairn --version, CPU', version, 1.5),
      cpuRow('start-up: cairn ls --limit 5 against a running Cairn, CPU', ls, 2.5),
      {
        name: 'start-up: cairn mcp, spawn to its initialize result',
        cairn: msOf(mcp.b),
        baseline: `bare stdio server on the same MCP SDK: ${msOf(mcp.a)}`,
        figure: ratio(mcp.b / mcp.a),
        target: '≤ 1.15×',
        pass: mcp.b / mcp.a <= 1.15,
      },
      {
        name: 'start-up: cairn serve (fresh data folder), spawn to the first 200 on /health',
        cairn: msOf(serve.b),
        baseline: `bare Fastify: ${msOf(serve.a)}`,
        figure: ratio(serve.b / serve.a),
        target: '',
        pass: null,
      },
    ];
  } finally {
    await cairn.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
