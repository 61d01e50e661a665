import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BaselineInfo } from '../../src/bench/baseline-child.js';
import { childEnv, MALLOC_THRESHOLDS_COMMAND, startChild } from '../../src/bench/ipc.js';

/**
 * A bare baseline must run with the process setting Cairn's start applies (glibc's malloc
 * thresholds raised, tested in malloc-thresholds.test.ts): otherwise the upload ceiling the
 * hash-only server stands for pays page faults Cairn is spared (48,000-75,000 per GiB against
 * 1,100-3,000, docs/benchmarks.md round 12). s3rver is the reference as it ships, so it is left
 * alone. Asked of the built children, as the bench starts them.
 */
async function raisedIn(mode: string, arg?: string): Promise<boolean> {
  const script = path.resolve('dist/bench/baseline-child.js');
  const child = await startChild<BaselineInfo>(script, arg === undefined ? [mode] : [mode, arg], childEnv({}));
  try {
    return await child.call<boolean>(MALLOC_THRESHOLDS_COMMAND);
  } finally {
    await child.stop();
  }
}

describe("bench: the baselines' process settings", () => {
  it("the bare servers raise glibc's malloc thresholds, as Cairn's start does", async () => {
    expect(await raisedIn('hash')).toBe(true);
    expect(await raisedIn('fastify', JSON.stringify({ id: 'x' }))).toBe(true);
    expect(await raisedIn('file', path.resolve('package.json'))).toBe(true);
  });

  it('s3rver runs as it ships', async () => {
    expect(await raisedIn('s3rver')).toBe(false);
  });
});
