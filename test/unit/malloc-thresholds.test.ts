import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const onGlibc = Boolean(
  (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime,
);
if (!onGlibc) console.warn('SKIPPED: malloc-thresholds tests need glibc (this Node does not run on it)');

/**
 * What a process faults in when it allocates, fills and frees blocks of 1, 2, ... 24 MiB, one at
 * a time (300 MiB in all). Freed memory that glibc keeps is reused, so only the heap's growth to
 * the largest block is new (about 6,000 pages); memory it gives back is faulted in again every
 * time (about 77,000). The child collects garbage itself, with array buffers freed during the
 * collection, so each block is freed before the next is made.
 *
 * `setup`: 'server' starts Cairn's real server (built, on an empty data folder) first, as
 * `cairn serve` does; 'bare' does nothing first.
 */
async function faultsOfRegrowingBlocks(setup: 'server' | 'bare', dataDir: string, env: NodeJS.ProcessEnv = {}) {
  const dist = (p: string) => JSON.stringify(path.resolve('dist', p));
  const script = `
    ${
      setup === 'server'
        ? `const { loadConfig } = await import(${dist('config.js')});
           const { startServer } = await import(${dist('server.js')});
           const config = loadConfig({ dataDir: ${JSON.stringify(dataDir)}, apiPort: 0, viewerPort: 0,
             contentPort: 0, logLevel: 'silent', sweepIntervalSeconds: 0 }, {});
           const silent = { info() {}, warn() {}, error() {} };
           const server = await startServer(config, { env: {}, log: silent });`
        : 'const server = { close: async () => {} };'
    }
    gc();
    const MiB = 1024 * 1024;
    const before = process.resourceUsage().minorPageFault;
    for (let mib = 1; mib <= 24; mib++) {
      let block = Buffer.allocUnsafeSlow(mib * MiB);
      block.fill(1);
      block = null;
      gc();
    }
    const faults = process.resourceUsage().minorPageFault - before;
    await server.close();
    console.log(faults);`;
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', '--no-concurrent-array-buffer-sweeping', '--input-type=module', '-e', script],
    { env: { PATH: process.env.PATH, ...env } },
  );
  return Number(stdout.trim().split('\n').at(-1));
}

describe.skipIf(!onGlibc)("a server's freed heap memory (glibc's malloc thresholds)", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cairn-malloc-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is given back and faulted in again in a bare Node process', async () => {
    expect(await faultsOfRegrowingBlocks('bare', path.join(dir, 'unused'))).toBeGreaterThan(60_000);
  });

  it('is kept and reused once Cairn has started its server', async () => {
    const faults = await faultsOfRegrowingBlocks('server', path.join(dir, 'data'));
    // The growth to 24 MiB is mostly new memory (up to 6,144 pages, less what the start left
    // free); each block after that reuses it.
    expect(faults).toBeGreaterThan(3_000);
    expect(faults).toBeLessThan(15_000);
  });

  it('follows GLIBC_TUNABLES where an operator set the thresholds', async () => {
    const env = { GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072' };
    expect(await faultsOfRegrowingBlocks('server', path.join(dir, 'tuned'), env)).toBeGreaterThan(60_000);
  });
});
