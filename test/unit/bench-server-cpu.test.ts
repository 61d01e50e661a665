import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BenchChild, childEnv, startChild } from '../../src/bench/ipc.js';
import { type LoadResult, withServerCpu } from '../../src/bench/load.js';
import { withUsage } from '../../src/bench/usage.js';

/** Keeps this process's CPU busy for `ms`. */
function spin(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

/**
 * The GET row "server CPU per request" and the uploads' "CPU per GiB and server page faults" must
 * count the server's process, not the bench's own: a child (the built serveIpc, as every bench
 * server runs it) that burns CPU or touches new memory on request, measured from this process.
 */
describe("bench: what a server's process used", () => {
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
      `import { closeSync, openSync, writeSync } from 'node:fs';
       import { serveIpc } from ${JSON.stringify(ipc)};
       const kept = [];
       serveIpc({}, async (cmd, ms) => {
         if (cmd === 'syscalls') {
           // Until the kernel has spent ms of CPU on this process: 1 MiB writes into the page cache
           // of a scratch file, rewritten in place (a copy in the kernel, next to nothing in user space).
           const fd = openSync(${JSON.stringify(path.join(dir, 'writes.bin'))}, 'w');
           const block = Buffer.alloc(1024 * 1024, 1);
           const start = process.resourceUsage().systemCPUTime;
           for (let i = 0; (process.resourceUsage().systemCPUTime - start) / 1000 < ms; i++) writeSync(fd, block, 0, block.length, (i % 16) * block.length);
           closeSync(fd);
           return null;
         }
         if (cmd === 'touch') {
           // ms MiB of memory this process has never touched, filled so every page is faulted in.
           kept.push(Buffer.alloc(ms * 1024 * 1024, 1));
           return null;
         }
         if (cmd !== 'spin' && cmd !== 'compute') throw new Error('unknown command ' + cmd);
         // Until this process has used ms of CPU, however long the machine makes that take.
         // 'compute' asks the kernel for the time only between millions of multiplications.
         const start = process.cpuUsage();
         const used = () => { const d = process.cpuUsage(start); return (d.user + d.system) / 1000; };
         let x = 1;
         while (used() < ms) if (cmd === 'compute') for (let i = 0; i < 1e6; i++) x = (x * 31 + i) | 0;
         // The product goes back, so the multiplications cannot be optimized away.
         return cmd === 'compute' ? x : null;
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

  it("splits a transfer's cost: the server's CPU and the bench's own CPU as the client's", async () => {
    const { value, usage } = await withUsage(child, async () => {
      spin(SPIN_MS);
      await child.call('spin', SPIN_MS);
      return 'done';
    });
    expect(value).toBe('done');
    expect(usage.serverCpuS).toBeGreaterThanOrEqual(SPIN_MS / 1000);
    expect(usage.serverCpuS).toBeLessThan((3 * SPIN_MS) / 1000);
    // The bench spun for SPIN_MS of wall time; on a busy machine it may get less CPU than that.
    expect(usage.clientCpuS).toBeGreaterThan(0);
    expect(usage.clientCpuS).toBeLessThan((2 * SPIN_MS) / 1000);
  });

  it("splits the server's CPU: the kernel's part apart from the rest", async () => {
    const kernel = await withUsage(child, () => child.call('syscalls', SPIN_MS));
    expect(kernel.usage.serverSystemS).toBeGreaterThanOrEqual(SPIN_MS / 1000);
    expect(kernel.usage.serverSystemS).toBeLessThanOrEqual(kernel.usage.serverCpuS);
    // Arithmetic in JavaScript is user time: at most a sliver of it is the kernel's.
    const user = await withUsage(child, () => child.call('compute', SPIN_MS));
    expect(user.usage.serverCpuS).toBeGreaterThanOrEqual(SPIN_MS / 1000);
    expect(user.usage.serverSystemS).toBeLessThan(0.25 * user.usage.serverCpuS);
  });

  it('counts the page faults of memory the server touches for the first time', async () => {
    // Measured apart from the CPU test: on a VM that backs memory lazily, faulting in 64 MiB
    // costs the server a few hundred ms of CPU itself.
    const { usage } = await withUsage(child, () => child.call('touch', 64));
    // 64 MiB of new memory is 16,384 pages of 4 KiB (fewer if the kernel hands out huge pages).
    expect(usage.serverFaults).toBeGreaterThan(1000);
  });

  it('counts no page faults of the server for memory it does not touch', async () => {
    const { usage } = await withUsage(child, async () => {
      Buffer.alloc(64 * 1024 * 1024, 1);
    });
    expect(usage.serverFaults).toBeLessThan(1000);
  });
});
