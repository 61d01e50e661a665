import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MetadataStore } from '../../src/ports/metadata-store.js';
import { expectError, put } from '../helpers/e2e.js';
import { withFaults } from '../helpers/faults.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const storeFaults: { failNext?: (method: keyof MetadataStore & string, error?: Error) => void } = {};
const MINTED = /^req_[0-9a-f]{32}$/;

/** What the listeners write to stderr (Fastify's log lines are JSON there) while `fn` runs. */
async function stderrDuring(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    lines.push(String(chunk));
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  try {
    await fn();
  } finally {
    process.stderr.write = write;
  }
  return lines;
}

beforeAll(async () => {
  s = await startTestServer({
    logLevel: 'error',
    wrapAdapters: (adapters) => {
      const faults = withFaults(adapters.store);
      storeFaults.failNext = faults.failNext;
      return { ...adapters, store: faults.target };
    },
  });
});
afterAll(async () => {
  await s?.close();
});

describe('X-Request-Id', () => {
  it('every response carries one, minted per request when the client sends none', async () => {
    const a = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts');
    const b = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts');
    expect(a.status).toBe(200);
    expect(a.headers.get('x-request-id')).toMatch(MINTED);
    expect(b.headers.get('x-request-id')).toMatch(MINTED);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
    for (const base of [s.viewerUrl, s.contentUrl]) {
      const r = await fetch(`${base}/health`);
      expect(r.headers.get('x-request-id')).toMatch(MINTED);
    }
  });

  it("keeps the caller's id when it is a sane token, in the header and the error envelope", async () => {
    for (const id of ['7f9c2ba4-e88f-4c3a-9d1e-3b2a1c0d9e8f', 'lb.abc:123_x', 'a'.repeat(128)]) {
      const r = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts/art_0000000000000000', undefined, {
        'x-request-id': id,
      });
      expectError(r, 404, 'artifact_not_found');
      expect(r.headers.get('x-request-id')).toBe(id);
      expect(r.json.error.request_id).toBe(id);
    }
    // An unknown route, an unauthenticated call and an unknown link on the content origin too.
    const unknown = await api(s.apiUrl, s.apiKey, 'GET', '/v1/nothing', undefined, { 'x-request-id': 'given-1' });
    expectError(unknown, 404, 'not_found');
    expect(unknown.json.error.request_id).toBe('given-1');
    const anon = await api(s.apiUrl, null, 'GET', '/v1/artifacts', undefined, { 'x-request-id': 'given-2' });
    expectError(anon, 401, 'unauthorized');
    expect(anon.json.error.request_id).toBe('given-2');
    const link = await fetch(`${s.contentUrl}/lnk_00000000000000000000`, { headers: { 'x-request-id': 'given-3' } });
    expect(link.status).toBe(404);
    expect(((await link.json()) as { error: { request_id: string } }).error.request_id).toBe('given-3');
    expect(link.headers.get('x-request-id')).toBe('given-3');
  });

  it('replaces an id that is not a sane token (too long, spaces, separators, empty)', async () => {
    for (const id of ['a'.repeat(129), 'has space', 'a,b', '"quoted"', '-leading', '{json}', '']) {
      const r = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts/art_0000000000000000', undefined, {
        'x-request-id': id,
      });
      expectError(r, 404, 'artifact_not_found');
      expect(r.headers.get('x-request-id')).toMatch(MINTED);
    }
  });

  it('the id of a failed request is in its envelope and in the log line of the failure', async () => {
    const art = await put(s.apiUrl, s.apiKey, 'logged');
    let r: Awaited<ReturnType<typeof api>> | undefined;
    const lines = await stderrDuring(async () => {
      storeFaults.failNext?.('getArtifactWithPage', new Error('injected: secret internals'));
      r = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${art.artifact_id}`, undefined, {
        'x-request-id': 'trace-500',
      });
    });
    if (!r) throw new Error('no response');
    expectError(r, 500, 'server_error');
    expect(r.json.error.request_id).toBe('trace-500');
    expect(r.text).not.toContain('secret internals');
    const logged = lines.filter((l) => l.includes('"reqId":"trace-500"'));
    expect(logged.length, lines.join('')).toBeGreaterThan(0);
    expect(logged.join('')).toContain('secret internals');
  });
});
