import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchChild, childEnv, startChild } from '../../src/bench/ipc.js';
import { type LoadResult, withServerCpu } from '../../src/bench/load.js';

/** Keeps this process's CPU busy for `ms`. */
function spin(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

/**
 * The GET row "server CPU per request" must count the server's process, not the bench's own: a
 * child (the built serveIpc, as every bench server runs it) that burns CPU on request, timed from
 * this process.
 */
describe('bench: server CPU per request', () => {
  let dir: string;
  let child: BenchChild<unknown>;
  const SPIN_MS = 80;
  const REQUESTS = 4;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cairn-bench-cpu-'));
    const script = path.join(dir, 'spinning-child.mjs');
    const ipc = path.resolve('dist/bench/ipc.js');
    await writeFile(
      script,
      `import { serveIpc } from ${JSON.stringify(ipc)};
       serveIpc({}, async (cmd, ms) => {
         if (cmd !== 'spin') throw new Error('unknown command ' + cmd);
         // Until this process has used ms of CPU, however long the machine makes that take.
         const start = process.cpuUsage();
         const used = () => { const d = process.cpuUsage(start); return (d.user + d.system) / 1000; };
         while (used() < ms) {}
         return null;
       });
       process.once('disconnect', () => process.exit(0));`,
    );
    child = await startChild(script, [], childEnv({}));
  });
  afterAll(async () => {
    await child?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const run = (work: () => Promise<void>) => async (): Promise<LoadResult> => {
    await work();
    return { reqPerSec: 0, p50: 0, p99: 0, total: REQUESTS };
  };

  it("divides the CPU the server's process used during the run by the requests", async () => {
    const r = await withServerCpu(
      child,
      run(() => child.call('spin', SPIN_MS)),
    );
    // The child spins until it has used SPIN_MS of CPU: at least that, plus a little for the messages.
    const perRequest = r.serverCpuPerRequest!;
    expect(perRequest).toBeGreaterThanOrEqual((SPIN_MS * 1000) / REQUESTS);
    expect(perRequest).toBeLessThan((3 * SPIN_MS * 1000) / REQUESTS);
    expect(r.total).toBe(REQUESTS);
  });

  it("does not count the bench's own CPU", async () => {
    const r = await withServerCpu(
      child,
      run(async () => spin(SPIN_MS)),
    );
    expect(r.serverCpuPerRequest!).toBeLessThan((0.25 * SPIN_MS * 1000) / REQUESTS);
  });
});
