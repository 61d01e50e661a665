import { afterEach, describe, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * CAIRN_TRUST_PROXY behind a load balancer: the client address is read from the right of
 * X-Forwarded-For, through the trusted hops only, so a client cannot choose its own address by
 * writing a forged value at the left (which the balancer keeps and appends to).
 */

let s: TestServer | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

/** An unlock attempt on an unknown page, as relayed by a balancer that appended `client`. */
const attempt = (server: TestServer, n: number, forwardedFor: string) =>
  api(
    server.apiUrl,
    null,
    'POST',
    `/v1/public/pages/pg_${String(n).padStart(16, 'Q')}/unlock`,
    { password: 'x' },
    {
      'x-forwarded-for': forwardedFor,
    },
  );

/** Spends one client's whole per-IP unlock budget (30 a minute), each time with a new forged entry. */
async function exhaust(server: TestServer, client: string): Promise<void> {
  for (let i = 0; i < 30; i++)
    expectError(await attempt(server, i, `198.51.100.${i}, ${client}`), 404, 'artifact_not_found');
}

describe.each([
  ['a hop count', '1'],
  ['the balancer address', '127.0.0.1'],
])('trusting %s', (_what, setting) => {
  it('a forged leftmost X-Forwarded-For does not change the client IP used by the unlock limiter', async () => {
    s = await startTestServer({ clock: new ManualClock(Date.UTC(2026, 3, 1)), env: { CAIRN_TRUST_PROXY: setting } });
    await exhaust(s, '203.0.113.7');
    // Forged values at the left, and no forged value at all: the same client, so still refused.
    expectError(await attempt(s, 30, '192.0.2.99, 203.0.113.7'), 429, 'rate_limited');
    expectError(await attempt(s, 31, '10.9.9.9, 192.0.2.1, 203.0.113.7'), 429, 'rate_limited');
    expectError(await attempt(s, 32, '203.0.113.7'), 429, 'rate_limited');
    // Another client behind the same balancer has its own budget: the header is honoured.
    expectError(await attempt(s, 33, '192.0.2.99, 203.0.113.8'), 404, 'artifact_not_found');
  });
});

it('without CAIRN_TRUST_PROXY the header is ignored: the socket address is the client', async () => {
  s = await startTestServer({ clock: new ManualClock(Date.UTC(2026, 3, 1)) });
  await exhaust(s, '203.0.113.7');
  expectError(await attempt(s, 30, '203.0.113.8'), 429, 'rate_limited');
});
