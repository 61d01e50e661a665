import { Readable } from 'node:stream';
import { CairnClient, CairnError } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { caught, sha256, tempFolder } from './fixtures.js';
import { FaultProxy } from './proxy.js';

/** The retry policy and CairnError fields, through a real proxy that injects failures. */

let s: TestServer;
let proxy: FaultProxy;
let tmp: Awaited<ReturnType<typeof tempFolder>>;
let artifactId: string;

const envelope = (code: string, status: number, extra: Record<string, unknown> = {}) => ({
  error: { code, message: `injected ${code}`, status, ...extra },
});
const rateLimited = { status: 429, headers: { 'retry-after': '1' }, body: envelope('rate_limited', 429) };
const serverError = { status: 500, body: envelope('server_error', 500, { request_id: 'req-42' }) };

const viaProxy = (opts: { maxRetries?: number; timeoutMs?: number } = {}) =>
  new CairnClient({ apiKey: s.apiKey, baseUrl: proxy.url, ...opts });

beforeAll(async () => {
  s = await startTestServer();
  proxy = await new FaultProxy(s.apiUrl).start();
  tmp = await tempFolder();
  artifactId = (await viaProxy().uploadBytes('target', { filename: 't.txt' })).artifact_id;
});
afterAll(async () => {
  await proxy?.close();
  await s?.close();
  await tmp?.remove();
});

describe('429', () => {
  it('is retried after Retry-After, for a GET', async () => {
    proxy.next(rateLimited);
    const t0 = Date.now();
    expect((await viaProxy().whoami()).tenant_name).toBe('main');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(proxy.seen).toEqual(['GET /v1/whoami', 'GET /v1/whoami']);
  });

  it('is retried even for createLink (the server refused before doing anything)', async () => {
    proxy.next(rateLimited);
    const link = await viaProxy().createLink(artifactId);
    expect(link.artifact_id).toBe(artifactId);
    expect(proxy.seen).toHaveLength(2);
  });

  it('becomes a typed error once retries are used up, with retryAfter from the body', async () => {
    proxy.next({
      status: 429,
      headers: { 'retry-after': '7' },
      body: envelope('rate_limited', 429, { retry_after_seconds: 7, retry_after: 7 }),
    });
    const err = await caught(() => viaProxy({ maxRetries: 0 }).whoami());
    expect(err).toBeInstanceOf(CairnError);
    expect(err).toMatchObject({ code: 'rate_limited', status: 429, retryAfter: 7, upgradeUrl: null });
    expect(proxy.seen).toHaveLength(1);
  });

  it('reads Retry-After from the header when the body has no envelope (seconds or HTTP date)', async () => {
    proxy.next({ status: 429, headers: { 'retry-after': '3', 'content-type': 'text/plain' } });
    expect(await caught(() => viaProxy({ maxRetries: 0 }).whoami())).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryAfter: 3,
    });
    const at = new Date(Date.now() + 10_000).toUTCString();
    proxy.next({ status: 429, headers: { 'retry-after': at } });
    const err = (await caught(() => viaProxy({ maxRetries: 0 }).whoami())) as CairnError;
    expect(err.retryAfter).toBeGreaterThanOrEqual(8);
    expect(err.retryAfter).toBeLessThanOrEqual(11);
  });

  it('is not retried for uploadStream (its body can be read only once)', async () => {
    proxy.next(rateLimited);
    const err = await caught(() =>
      viaProxy().uploadStream(Readable.from([Buffer.from('once')]), { filename: 'o.txt' }),
    );
    expect(err).toMatchObject({ code: 'rate_limited', retryAfter: 1 });
    expect(proxy.seen).toHaveLength(1);
  });
});

describe('5xx', () => {
  it('is retried for idempotent calls: GET, DELETE, seal', async () => {
    proxy.next(serverError);
    expect((await viaProxy().getArtifact(artifactId)).artifact_id).toBe(artifactId);
    expect(proxy.seen).toEqual([`GET /v1/artifacts/${artifactId}`, `GET /v1/artifacts/${artifactId}`]);

    const doomed = (await viaProxy().uploadBytes('d', { filename: 'd.txt', sessionId: 'r-s' })).artifact_id;
    proxy.next(serverError);
    expect((await viaProxy().deleteArtifact(doomed)).deleted).toBe(true);
    expect(proxy.seen).toHaveLength(2);

    proxy.next(serverError);
    expect((await viaProxy().sealSession('r-s')).status).toBe('sealed');
    expect(proxy.seen).toHaveLength(2);
  });

  it('is NOT retried for createLink, and the error carries status, code and requestId', async () => {
    const before = (await viaProxy().whoami()).active_links;
    proxy.next(serverError);
    const err = await caught(() => viaProxy().createLink(artifactId));
    expect(err).toBeInstanceOf(CairnError);
    expect(err).toMatchObject({ code: 'server_error', status: 500, requestId: 'req-42' });
    expect(proxy.seen).toEqual([`POST /v1/artifacts/${artifactId}/links`]);
    expect((await viaProxy().whoami()).active_links).toBe(before);
  });

  it('is NOT retried for requestUploadUrl', async () => {
    proxy.next(serverError);
    expect(await caught(() => viaProxy().requestUploadUrl({ filename: 'p.bin', sizeBytes: 5 }))).toMatchObject({
      status: 500,
    });
    expect(proxy.seen).toHaveLength(1);
  });

  it('uploadFile with an idempotency key re-opens the file and retries; one artifact results', async () => {
    const content = Buffer.alloc(256 * 1024, 3);
    const file = await tmp.write('retry.bin', content);
    proxy.next(serverError);
    const rec = await viaProxy().uploadFile(file, { sessionId: 'retry-up', idempotencyKey: 'retry-key-1' });
    expect(rec).toMatchObject({ size_bytes: content.length, content_hash: sha256(content) });
    expect(proxy.seen).toEqual(['POST /v1/artifacts', 'POST /v1/artifacts']);
    expect((await viaProxy().listArtifacts({ sessionId: 'retry-up' })).artifacts).toHaveLength(1);
  });

  it('uploadFile and uploadBytes without a key are not retried', async () => {
    const file = await tmp.write('noretry.bin', 'x');
    proxy.next(serverError);
    expect(await caught(() => viaProxy().uploadFile(file))).toMatchObject({ status: 500 });
    expect(proxy.seen).toHaveLength(1);
    proxy.next(serverError);
    expect(await caught(() => viaProxy().uploadBytes('x', { filename: 'x.txt' }))).toMatchObject({ status: 500 });
    expect(proxy.seen).toHaveLength(1);
    proxy.next(serverError);
    expect((await viaProxy().uploadBytes('y', { filename: 'y.txt', idempotencyKey: 'k-y' })).size_bytes).toBe(1);
    expect(proxy.seen).toHaveLength(2);
  });

  it('stops after maxRetries (1 + maxRetries requests in all)', async () => {
    proxy.next(serverError, serverError, serverError, serverError);
    expect(await caught(() => viaProxy({ maxRetries: 2 }).whoami())).toMatchObject({ status: 500 });
    expect(proxy.seen).toHaveLength(3);
  });

  it('a non-JSON error body still gives a typed error', async () => {
    proxy.next({ status: 502, headers: { 'content-type': 'text/html' } });
    expect(await caught(() => viaProxy({ maxRetries: 0 }).whoami())).toMatchObject({
      code: 'server_error',
      status: 502,
      requestId: null,
    });
  });
});

describe('DELETE whose answer was lost', () => {
  it('resolves as already_deleted when the retry finds the artifact deleted', async () => {
    for (const lost of [serverError, { reset: true } as const]) {
      const doomed = (await viaProxy().uploadBytes('d', { filename: 'lost.txt' })).artifact_id;
      proxy.next({ forwardThen: lost });
      const result = await viaProxy().deleteArtifact(doomed);
      expect(proxy.seen).toEqual([`DELETE /v1/artifacts/${doomed}`, `DELETE /v1/artifacts/${doomed}`]);
      expect(result).toEqual({ artifact_id: doomed, deleted: true, deleted_at: null, already_deleted: true });
      expect(await caught(() => viaProxy().getArtifact(doomed))).toMatchObject({ code: 'artifact_already_deleted' });
    }
  });

  it('a plain delete carries no marker; deleting again (even after a 429) still throws', async () => {
    const doomed = (await viaProxy().uploadBytes('d', { filename: 'twice.txt' })).artifact_id;
    const first = await viaProxy().deleteArtifact(doomed);
    expect(first).toEqual({ artifact_id: doomed, deleted: true, deleted_at: expect.any(String) });
    expect(await caught(() => viaProxy().deleteArtifact(doomed))).toMatchObject({ code: 'artifact_already_deleted' });
    // A 429 means nothing happened on that attempt, so the 410 after it is the real answer.
    proxy.next(rateLimited);
    expect(await caught(() => viaProxy().deleteArtifact(doomed))).toMatchObject({
      code: 'artifact_already_deleted',
      status: 410,
    });
    expect(proxy.seen).toHaveLength(2);
  });
});

describe('network errors and timeouts', () => {
  it('a reset connection is retried for a GET but not for createLink', async () => {
    proxy.next({ reset: true });
    expect((await viaProxy().getArtifact(artifactId)).artifact_id).toBe(artifactId);
    expect(proxy.seen).toHaveLength(2);
    proxy.next({ reset: true });
    expect(await caught(() => viaProxy().createLink(artifactId))).toMatchObject({ code: 'network_error', status: 0 });
    expect(proxy.seen).toHaveLength(1);
  });

  it('timeoutMs turns a slow answer into network_error', async () => {
    proxy.next({ delayMs: 1_500 });
    const err = await caught(() => viaProxy({ maxRetries: 0, timeoutMs: 200 }).whoami());
    expect(err).toMatchObject({ code: 'network_error', status: 0 });
    expect((err as Error).message).toMatch(/timed out/i);
  });

  it('a 4xx is never retried', async () => {
    proxy.next();
    expect(await caught(() => viaProxy().getArtifact('art_AAAAAAAAAAAAAAAA'))).toMatchObject({ status: 404 });
    expect(proxy.seen).toHaveLength(1);
  });
});
