import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServe } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, data, type McpSession, type ProxyFailure, startFlakyProxy } from './mcp-client.js';

/**
 * What `cairn mcp` does when the API fails: repeat what is safe to repeat (path uploads and
 * presigned reservations included, thanks to their idempotency key), and for create_download_link,
 * which is not idempotent, make one attempt and say the outcome is unknown.
 */

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const FAILURES: ProxyFailure[] = ['refuse', 'after', 'drop'];

let srv: TestServer;
let dir: string;
let proxy: Awaited<ReturnType<typeof startFlakyProxy>>;
let mcp: McpSession;
const bytes = randomBytes(300_000);

beforeAll(async () => {
  srv = await startTestServer();
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-mcp-retries-')));
  await writeFile(path.join(dir, 'data.bin'), bytes);
  proxy = await startFlakyProxy(srv.apiUrl);
  mcp = await connectMcp({
    env: { HOME: dir, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: proxy.url },
    cwd: dir,
    confirmations: true,
  });
});
afterAll(async () => {
  await mcp?.close();
  await proxy?.close();
  await srv?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Requests the proxy saw for `key` ("METHOD /path") while `fn` ran. */
async function counting<T>(key: string, fn: () => Promise<T>): Promise<{ result: T; sent: number }> {
  const before = proxy.seen.filter((k) => k === key).length;
  const result = await fn();
  return { result, sent: proxy.seen.filter((k) => k === key).length - before };
}

describe('store_artifact from a path', () => {
  for (const how of FAILURES) {
    it(`re-opens the file and repeats with the same key after a failure (${how}): one artifact`, async () => {
      const filename = `retried-${how}.bin`;
      proxy.failNext((m, p) => m === 'POST' && p === '/v1/artifacts', how);
      const { result, sent } = await counting('POST /v1/artifacts', () =>
        mcp.call('store_artifact', { filename, path: 'data.bin' }),
      );
      expect(sent).toBe(2);
      const rec = data(result);
      expect(rec).toMatchObject({ filename, size_bytes: bytes.length, content_hash: sha(bytes) });
      const listed = data(await mcp.call('list_artifacts', { filename }));
      expect(listed.artifacts.map((a: { artifact_id: string }) => a.artifact_id)).toEqual([rec.artifact_id]);
    });
  }

  it('stops after three retries and says it is safe to try again later', async () => {
    proxy.failNext((m, p) => m === 'POST' && p === '/v1/artifacts', 'refuse', 4);
    const { result, sent } = await counting('POST /v1/artifacts', () =>
      mcp.call('store_artifact', { filename: 'never.bin', path: 'data.bin' }),
    );
    expect(sent).toBe(4);
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({ status: 500, code: 'server_error', retry_hint: 'retry_later' });
    expect(result._meta?.idempotency_key).toBeTypeOf('string');
  });
});

describe('request_upload_url: an automatic Idempotency-Key, so a failed attempt is repeated safely', () => {
  for (const how of FAILURES) {
    it(`after a failure (${how}) the repeat answers one reservation`, async () => {
      proxy.failNext((m, p) => m === 'POST' && p === '/v1/artifacts/upload-url', how);
      const { result, sent } = await counting('POST /v1/artifacts/upload-url', () =>
        mcp.call('request_upload_url', { filename: `big-${how}.bin`, size_bytes: 10 }),
      );
      expect(sent).toBe(2);
      expect(result.isError).toBeFalsy();
      const ticket = data(result);
      const key = result._meta?.idempotency_key as string;
      expect(key).toBeTypeOf('string');
      // 'after' reached the server before the answer was lost: the repeat was answered with that reservation.
      expect(result._meta?.replayed === true).toBe(how === 'after');
      // The agent can see it, and asking again with the key reserves nothing new.
      expect(data(await mcp.call('get_artifact', { artifact_id: ticket.artifact_id }))).toMatchObject({
        status: 'pending',
        filename: `big-${how}.bin`,
      });
      const again = await mcp.call('request_upload_url', {
        filename: `big-${how}.bin`,
        size_bytes: 10,
        idempotency_key: key,
      });
      expect(data(again).artifact_id).toBe(ticket.artifact_id);
      expect(again._meta).toMatchObject({ idempotency_key: key, replayed: true });
    });
  }

  it('when every attempt fails it says to repeat with the same key, which it returns', async () => {
    proxy.failNext((m, p) => m === 'POST' && p === '/v1/artifacts/upload-url', 'refuse', 4);
    const result = await mcp.call('request_upload_url', { filename: 'never.bin', size_bytes: 10 });
    expect(result.isError).toBe(true);
    const key = result._meta?.idempotency_key as string;
    expect(result._meta).toMatchObject({ status: 500, retry_hint: 'retry_later' });
    expect(JSON.stringify(result.content)).toContain(`with the same idempotency_key (${key})`);
  });
});

describe('a Cairn server that was killed', () => {
  it('non-idempotent tools say the outcome is unknown; safe ones say try later', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'cairn-mcp-killed-'));
    const serve = await spawnServe(dataDir, {}, 60_000);
    const s = await connectMcp({
      env: { HOME: dir, CAIRN_API_KEY: serve.apiKey ?? '', CAIRN_API_URL: serve.apiUrl },
      cwd: dir,
      confirmations: true,
    });
    try {
      const rec = data(await s.call('store_artifact', { filename: 'before.txt', content: 'aGk=' }));
      serve.child.kill('SIGKILL');
      await serve.exited;

      const link = await s.call('create_download_link', { artifact_id: rec.artifact_id });
      expect(link.isError).toBe(true);
      expect(link._meta).toMatchObject({ status: 0, code: 'network_error', retry_hint: 'verify_state' });
      expect(JSON.stringify(link.content)).toMatch(/outcome is ambiguous.*Do NOT retry/);
      // With its key, a reservation is safe to ask for again once the server is back.
      const ticket = await s.call('request_upload_url', { filename: 'x.bin', size_bytes: 10 });
      expect(ticket._meta).toMatchObject({ status: 0, code: 'network_error', retry_hint: 'retry_later' });
      expect(ticket._meta?.idempotency_key).toBeTypeOf('string');
      const who = await s.call('whoami');
      expect(who._meta).toMatchObject({ status: 0, code: 'network_error', retry_hint: 'retry_later' });
    } finally {
      await s.close();
      await serve.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
