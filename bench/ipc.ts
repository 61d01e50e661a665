import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';

/**
 * A tiny request/response protocol over the IPC channel between the bench and its servers, so
 * every server under test runs in its own process and never shares an event loop with the client.
 */
interface Request {
  id: number;
  cmd: string;
  args: unknown;
}
interface Response {
  id: number;
  result?: unknown;
  error?: string;
}

export type Handler = (cmd: string, args: unknown) => Promise<unknown>;

/** Answered by every child (serveIpc) with its ProcessUsage; see withUsage. */
export const USAGE_COMMAND = 'usage';

/** What a process has used so far. */
export interface ProcessUsage {
  /** CPU time, user + system, in µs. */
  cpuMicros: number;
  /** The system (kernel) part of cpuMicros, in µs: system calls, page-cache copies, page faults. */
  systemMicros: number;
  /** Minor page faults: pages of memory the process touched for the first time (or again, after giving them back). */
  minorFaults: number;
}

function processUsage(): ProcessUsage {
  const { userCPUTime, systemCPUTime, minorPageFault } = process.resourceUsage();
  return { cpuMicros: userCPUTime + systemCPUTime, systemMicros: systemCPUTime, minorFaults: minorPageFault };
}

/**
 * Child side: answers requests with `handler`, then tells the parent it is ready with `info`.
 * Every child also answers `usage`: the CPU time and minor page faults its process has had so far
 * (a ProcessUsage).
 */
export function serveIpc(info: unknown, handler: Handler): void {
  process.on('message', (msg: Request) => {
    const answer = msg.cmd === USAGE_COMMAND ? Promise.resolve(processUsage()) : handler(msg.cmd, msg.args);
    answer.then(
      (result) => process.send?.({ id: msg.id, result } satisfies Response),
      (err: unknown) => process.send?.({ id: msg.id, error: err instanceof Error ? err.message : String(err) }),
    );
  });
  process.send?.({ id: 0, result: info } satisfies Response);
}

export interface BenchChild<Info> {
  child: ChildProcess;
  info: Info;
  call<T>(cmd: string, args?: unknown): Promise<T>;
  stop(): Promise<void>;
}

/** Forks the compiled bench script `<script>` (or `script`, if absolute) and waits for its ready message. */
export async function startChild<Info>(
  script: string,
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<BenchChild<Info>> {
  // CAIRN_BENCH_CPU_PROF=<dir> writes a V8 CPU profile of every server process on exit.
  const profDir = process.env.CAIRN_BENCH_CPU_PROF;
  const child = fork(path.resolve(import.meta.dirname, script), argv, {
    env,
    execArgv: profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<Info>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${script} exited early (${code})`)));
    child.on('message', (msg: Response) => {
      if (msg.id === 0) return resolve(msg.result as Info);
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error !== undefined) p?.reject(new Error(msg.error));
      else p?.resolve(msg.result);
    });
  });
  const info = await ready;
  return {
    child,
    info,
    call<T>(cmd: string, args?: unknown) {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ id, cmd, args } satisfies Request);
      });
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Environment for a child: the parent's minus every CAIRN_* setting, plus `extra`. */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CAIRN_')) env[k] = v;
  return { ...env, ...extra };
}
