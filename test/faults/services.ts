import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';

/**
 * Private PostgreSQL, Redis and S3 (s3rver) instances for the fault tests, each on a fixed port of
 * the test's own, in a temp folder, so a test can stop, kill, restart or slow them mid-request.
 * The shared services of CI and the development machines are never touched. The ports (19310-
 * 19342) lie below Linux's ephemeral range (32768-60999): an outgoing connection of anything else
 * on the machine is never given one of them, so a service restarted mid-test finds its port free.
 */

const run = promisify(execFile);
const LOGS = path.resolve(import.meta.dirname, '../../test-output/faults');

/** The PostgreSQL server binaries (Debian keeps them outside PATH), highest version first. */
function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  const fromPath = (process.env.PATH ?? '').split(':').find((d) => existsSync(path.join(d, 'pg_ctl')));
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(path.join(root, v, 'bin', 'pg_ctl')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(root, versions[0], 'bin');
  }
  return fromPath ?? null;
}

function onPath(binary: string): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => existsSync(path.join(d, binary)));
}

/** Why the fault tests cannot run here, or null when they can. */
export function faultServicesMissing(): string | null {
  if (!postgresBin()) return 'PostgreSQL server binaries (pg_ctl, initdb) not found (apt-get install postgresql)';
  if (!onPath('redis-server')) return 'redis-server not found (apt-get install redis-server)';
  if (process.getuid?.() === 0 && !onPath('runuser'))
    return 'running as root without runuser to start PostgreSQL as its own user';
  return null;
}

/**
 * In CI a missing service binary fails the file (the run must prove the faults); elsewhere the
 * file is skipped with a loud line saying why.
 */
export function faultTestsRunnable(file: string, missing: string | null = faultServicesMissing()): boolean {
  if (missing === null) return true;
  if (process.env.CI) throw new Error(`${file}: cannot run the fault tests in CI: ${missing}`);
  console.warn(`\n!!! SKIPPING ${file}: ${missing}\n`);
  return false;
}

/**
 * Resolves when something accepts TCP connections on the port; rejects after `timeoutMs`, or
 * at once when `child` (the server meant to listen there) exits. A probe that connected to itself
 * (possible only on a port of the ephemeral range) is not taken for the server.
 */
export async function waitForPort(port: number, timeoutMs = 30_000, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child && (child.exitCode !== null || child.signalCode !== null))
      throw new ChildExited(`server for port ${port} exited (${child.exitCode ?? child.signalCode})`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        const self = socket.localPort === port;
        socket.destroy();
        resolve(!self);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listening on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

class ChildExited extends Error {}

/**
 * Fails at once, saying why, when a fixed port is already taken: most often by a private service
 * an interrupted run (a killed vitest) left behind, which would otherwise show as a cryptic
 * "could not start server" from pg_ctl.
 */
export async function assertPortFree(port: number): Promise<void> {
  const taken = await new Promise<boolean>((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(true));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(false)));
  });
  if (taken) {
    throw new Error(
      `port ${port} is already in use (a service left by an interrupted test run? \`ss -ltnp | grep :${port}\` names it)`,
    );
  }
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface PrivatePostgres {
  url: string;
  port: number;
  /** `pg_ctl restart -m fast`: sessions are terminated, the server comes back on the same port. */
  restart(): Promise<void>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** `pg_terminate_backend` on every session but the caller's: what a DBA or a failover does. */
  terminateBackends(): Promise<number>;
  /** A client of its own (for locks that make statements slow). */
  client(): Promise<pg.Client>;
  close(): Promise<void>;
}

/** initdb + pg_ctl in a temp folder, as the postgres user when running as root. */
export async function startPrivatePostgres(port: number): Promise<PrivatePostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL binaries not found');
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-fault-pg-'));
  const data = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const as = (cmd: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]) : run(path.join(bin, cmd), args);
  await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const ctl = (args: string[]) => as('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), ...args]);
  // Cairn's pool retrying while the server is down can briefly hold the port (a connection to
  // itself, see waitForPort); the postmaster then fails to bind and exits: start it again.
  const start = async () => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await ctl(['-w', '-t', '60', '-o', options, 'start']);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
    }
  };
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const client = async () => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => {});
    await c.connect();
    return c;
  };
  return {
    url,
    port,
    start,
    restart: async () => {
      try {
        await ctl(['-w', '-t', '60', '-m', 'fast', '-o', options, 'restart']);
      } catch {
        // Stopped, but the start half failed (see start): the retrying start finishes it.
        await start();
      }
    },
    stop: async (mode = 'fast') => {
      await ctl(['-w', '-t', '60', '-m', mode, 'stop']);
    },
    terminateBackends: async () => {
      const c = await client();
      try {
        const r = await c.query(
          "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend') t",
        );
        return (r.rows[0] as { n: number }).n;
      } finally {
        await c.end();
      }
    },
    client,
    close: async () => {
      await ctl(['-w', '-m', 'immediate', 'stop']).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface PrivateRedis {
  url: string;
  /** SIGKILL: connections drop at once, as when the host or container dies. */
  kill(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A server run as a child process over a folder of its own: `kill` is SIGKILL (connections
 * drop at once, as when a host or container dies), `start` runs it again on the same port and
 * folder, `close` kills it and removes the folder.
 */
async function childServer(port: number, name: string, command: (dir: string) => [string, string[]]) {
  const dir = await mkdtemp(path.join(tmpdir(), `cairn-fault-${name}-`));
  let child: ChildProcess | null = null;
  const start = async () => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const [file, args] = command(dir);
      // Its output goes to test-output/ (gitignored): why a server died is there.
      mkdirSync(LOGS, { recursive: true });
      const out = openSync(path.join(LOGS, `${name}-${port}.log`), 'a');
      const c = spawn(file, args, { stdio: ['ignore', out, out] });
      closeSync(out);
      child = c;
      try {
        await waitForPort(port, Math.max(0, deadline - Date.now()), c);
        return;
      } catch (err) {
        // The port was briefly held (a client that connected to itself while the server was
        // down, see waitForPort): the server exits with EADDRINUSE; start it again.
        if (!(err instanceof ChildExited) || Date.now() > deadline) throw err;
      }
    }
  };
  const kill = async () => {
    const c = child;
    child = null;
    if (!c) return;
    c.kill('SIGKILL');
    await exited(c);
  };
  await start();
  return {
    start,
    kill,
    close: async () => {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function startPrivateRedis(port: number): Promise<PrivateRedis> {
  const server = await childServer(port, 'redis', (dir) => [
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
  ]);
  return { url: `redis://127.0.0.1:${port}`, ...server };
}

export interface PrivateS3 {
  endpoint: string;
  bucket: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** SIGKILL: in-flight requests are cut, new ones refused, until start(). Its files are kept. */
  kill(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** s3rver in a child process (so it can be killed mid-request), over a folder that outlives it. */
export async function startPrivateS3(port: number): Promise<PrivateS3> {
  const cli = path.join(
    path.dirname(createRequire(import.meta.url).resolve('s3rver/package.json')),
    'bin',
    's3rver.js',
  );
  const bucket = 'cairn-faults';
  const server = await childServer(port, 's3', (dir) => [
    process.execPath,
    [cli, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '--silent', '--configure-bucket', bucket],
  ]);
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
  // s3rver removes a folder once its last object is deleted, and a PUT racing that removal
  // crashes it (ENOENT, an unhandled 'error' event). Cairn creates and deletes staging objects
  // all the time, so one object that stays keeps the folder: the fault tests' S3 dies only
  // when they kill it.
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  try {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'staging/keep', Body: 'keeps the folder' }));
  } finally {
    client.destroy();
  }
  return { endpoint, bucket, credentials, ...server };
}
