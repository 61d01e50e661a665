import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebhookAbuseSink } from '../../src/adapters/abuse/index.js';
import type { AbuseReport } from '../../src/ports/abuse-sink.js';
import { eventually } from '../helpers/e2e.js';

/** The webhook sink against a real local HTTP server that never answers: bounds, timeouts, shutdown. */

let server: Server;
let url: string;
const held: ServerResponse[] = [];
let received = 0;

beforeEach(async () => {
  received = 0;
  server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    received++;
    held.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterEach(async () => {
  for (const res of held.splice(0)) res.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const report = (n: number): AbuseReport => ({
  slug: `pg_${String(n).padStart(16, 'W')}`,
  reason: 'spam',
  detail: '',
  tenantName: 't',
  artifactId: 'art_AAAAAAAAAAAAAAAA',
  reporterIp: '192.0.2.1',
  receivedAt: '2026-01-01T00:00:00.000Z',
});

describe('WebhookAbuseSink', () => {
  it('returns at once, abandons a delivery after its timeout, and logs it', async () => {
    const warnings: string[] = [];
    const sink = new WebhookAbuseSink(url, (m) => warnings.push(m), { timeoutMs: 150 });
    await sink.report(report(1));
    // Queued, not sent: the server cannot have seen it before this code yields to I/O.
    expect(received).toBe(0);
    await eventually(() => warnings.length === 1, 10_000, 'the timeout warning');
    expect(warnings[0]).toMatch(/failed for the report on pg_W+1: TimeoutError/);
    await sink.close();
  });

  it('bounds the queue: past it, reports are dropped with a warning, never queued', async () => {
    const warnings: string[] = [];
    const sink = new WebhookAbuseSink(url, (m) => warnings.push(m), {
      concurrency: 1,
      maxQueued: 2,
      timeoutMs: 60_000,
    });
    for (let i = 1; i <= 4; i++) await sink.report(report(i));
    // One in flight, two queued; the fourth does not fit.
    await eventually(() => received === 1, 10_000, 'the first delivery');
    await sink.report(report(5));
    expect(warnings).toEqual([
      expect.stringMatching(/has 2 reports queued; the report on pg_W+4 is only in the operator log/),
      expect.stringMatching(/has 2 reports queued; the report on pg_W+5/),
    ]);
    // Shutdown waits its grace period, then abandons the rest and says how many.
    const closing = performance.now();
    await sink.close(200);
    expect(performance.now() - closing).toBeLessThan(10_000);
    expect(warnings).toContainEqual(expect.stringMatching(/3 report\(s\) not delivered at shutdown/));
    expect(received).toBe(1);
    await sink.report(report(6));
    expect(warnings.at(-1)).toMatch(/is shutting down; the report on pg_W+6/);
  });
});
