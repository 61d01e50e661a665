import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faultTestsRunnable } from './services.js';
import { type FaultStack, startFaultStack } from './stack.js';
import { expectNothingLost, Traffic } from './traffic.js';

/** PostgreSQL stopped, restarted and its sessions terminated under traffic (ports 19310-19312). */
const runnable = faultTestsRunnable('test/faults/postgres.test.ts');

let stack: FaultStack;

async function ready(): Promise<number> {
  return (await fetch(`${stack.metricsUrl}/ready`)).status;
}

describe.runIf(runnable)('PostgreSQL faults', () => {
  beforeAll(async () => {
    stack = await startFaultStack(19310);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  it('stopped and restarted: calls get 503 + Retry-After (never a hang or a 500), then succeed without restarting Cairn', async () => {
    const t = new Traffic(stack.apiUrl, stack.key).start();
    try {
      await t.until(() => t.stored.size >= 10, '10 uploads before the fault');
      await stack.pg.stop('fast');
      const refused = t.counts.refused;
      await t.until(() => t.counts.refused >= refused + 10, 'refusals while PostgreSQL is down');
      expect(await ready()).toBe(503);
      await stack.pg.start();
      let stored = t.stored.size;
      await t.until(() => t.stored.size >= stored + 10, 'uploads once PostgreSQL is back');
      expect(await ready()).toBe(200);
      // pg_ctl restart in one go (what pg_ctlcluster restart does), traffic still running.
      await stack.pg.restart();
      stored = t.stored.size;
      await t.until(() => t.stored.size >= stored + 10, 'uploads after pg_ctl restart');
    } finally {
      await t.stop();
    }
    expect(t.violations).toEqual([]);
    expect(t.counts.refused).toBeGreaterThanOrEqual(10);
    await expectNothingLost(stack.apiUrl, stack.key, t);
    const metrics = await (await fetch(`${stack.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/cairn_dependency_failures_total\{dependency="database"\} [1-9]/);
  }, 180_000);

  it('pg_terminate_backend on every session, three times under traffic: nothing but 2xx or 503, nothing lost', async () => {
    const t = new Traffic(stack.apiUrl, stack.key).start();
    try {
      for (let round = 0; round < 3; round++) {
        const stored = t.stored.size;
        await t.until(() => t.stored.size >= stored + 10, `uploads before termination ${round + 1}`);
        expect(await stack.pg.terminateBackends()).toBeGreaterThan(0);
      }
      const stored = t.stored.size;
      await t.until(() => t.stored.size >= stored + 10, 'uploads after the last termination');
    } finally {
      await t.stop();
    }
    expect(t.violations).toEqual([]);
    await expectNothingLost(stack.apiUrl, stack.key, t);
  }, 180_000);
});
