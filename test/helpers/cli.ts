import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { Rec } from './e2e.js';
import { BIN, childEnv } from './process.js';

/** Runs the client commands of the real `cairn` binary (dist/, so build first) as a subprocess. */

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout as bytes, for byte-exact downloads. */
  bytes: Buffer;
}

export interface CliOptions {
  cwd: string;
  /** Always set it to a temp folder: the real home is never touched. */
  configDir: string;
  apiUrl: string;
  /** Added to the child's environment; anything named here wins. */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed (closed at once when absent). */
  input?: string;
  /**
   * Run under a pseudo-terminal (util-linux `script`), as a person would: stdout and stderr are
   * then both the terminal, and arrive together in `stdout` (`\r\n` line ends); with `stdoutTo`,
   * stdout goes to that file instead while stderr stays on the terminal.
   */
  terminal?: { stdoutTo?: string; columns?: number };
}

/** Whether `script` (util-linux) is there to give a child a pseudo-terminal. */
export const hasScript = spawnSync('script', ['--version']).status === 0;

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** No CAIRN_* (childEnv), no SERVICE_API_KEY and no colour settings leak in from the parent unless `env` names them. */
export function runCairn(args: string[], opts: CliOptions): Promise<CliRun> {
  return spawnCairn(args, opts).done;
}

/** runCairn, with a hold of the child while it runs (to kill it part way, say). */
export function spawnCairn(args: string[], opts: CliOptions): { child: ChildProcess; done: Promise<CliRun> } {
  const extra = opts.env ?? {};
  const env = childEnv({ CAIRN_CONFIG_DIR: opts.configDir, CAIRN_API_URL: opts.apiUrl, ...extra });
  // A test run inside an agent's session must not hand that session's id to `capture --snapshot`.
  for (const k of [
    'SERVICE_API_KEY',
    'NO_COLOR',
    'FORCE_COLOR',
    'XDG_CONFIG_HOME',
    'CLAUDE_SESSION_ID',
    'CLAUDE_CODE_SESSION_ID',
  ])
    if (!(k in extra)) delete env[k];
  const [command, argv] = opts.terminal
    ? ['script', ['-qec', terminalCommand(args, opts.terminal.stdoutTo, opts.terminal.columns), '/dev/null']]
    : [process.execPath, [BIN, ...args]];
  const child = spawn(command, argv, { cwd: opts.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const done = new Promise<CliRun>((resolve, reject) => {
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('error', reject);
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const bytes = Buffer.concat(out);
      resolve({ code: code ?? -1, stdout: bytes.toString(), stderr: err, bytes });
    });
    child.stdin.end(opts.input);
  });
  return { child, done };
}

/** The command `script` runs; with `columns`, on a terminal that many columns wide (as tmux or a window would be). */
function terminalCommand(args: string[], stdoutTo: string | undefined, columns?: number): string {
  const line = [process.execPath, BIN, ...args].map(shellQuote).join(' ');
  const sized = columns === undefined ? line : `stty cols ${columns} rows 50 && ${line}`;
  return stdoutTo === undefined ? sized : `${sized} > ${shellQuote(stdoutTo)}`;
}

/** A run that must have succeeded (the message on failure is its stderr). */
export function expectOk(r: CliRun): CliRun {
  expect(r.code, r.stderr).toBe(0);
  return r;
}

/** The stdout of a successful `--json` run, parsed. */
export function okJson(r: CliRun): Rec {
  return JSON.parse(expectOk(r).stdout);
}

/**
 * A temp working folder with a fresh config folder (`newConfig()` for another): what the CLI
 * suites run `cairn` in. `run` talks to `apiUrl` unless the env says otherwise.
 */
export async function cliWorkspace(apiUrl: string) {
  const work = await mkdtemp(path.join(tmpdir(), 'cairn-cli-'));
  let configDir = await mkdtemp(path.join(work, 'config-'));
  return {
    work,
    get configDir() {
      return configDir;
    },
    async newConfig(): Promise<string> {
      configDir = await mkdtemp(path.join(work, 'config-'));
      return configDir;
    },
    run(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliRun> {
      return runCairn(args, { cwd: work, configDir, apiUrl, env, ...(input === undefined ? {} : { input }) });
    },
    async file(name: string, content: string | Buffer): Promise<string> {
      const p = path.join(work, name);
      await mkdir(path.dirname(p), { recursive: true });
      await writeFile(p, content);
      return p;
    },
    remove: () => rm(work, { recursive: true, force: true }),
  };
}

/** A loopback URL with nothing listening (a port the OS handed out, then freed). */
export async function deadLoopbackUrl(): Promise<string> {
  const probe = net.createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise((r) => probe.close(r));
  return url;
}
