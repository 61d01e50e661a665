import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { artifactIdOfUploadUrl, CairnClient, CairnError } from 'cairn-store-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tusFetch, tusMetadata } from '../helpers/tus.js';
import { TusProxy } from '../helpers/tus-proxy.js';
import { ART_ID, caught, clientFor, sha256, tempFolder } from './fixtures.js';

/**
 * The SDK's resumable upload (tus 1.0.0, /v1/uploads/tus) against a real server, and through a
 * real proxy that cuts connections or answers for the server, to show the upload goes on from the
 * server's offset rather than starting over.
 */

const MB = 1024 * 1024;
const TUS = { 'tus-resumable': '1.0.0' };

let s: TestServer;
let proxy: TusProxy;
let tmp: Awaited<ReturnType<typeof tempFolder>>;
let file: string;
let content: Buffer;

const viaProxy = (opts: { maxRetries?: number } = {}) =>
  new CairnClient({ apiKey: s.apiKey, baseUrl: proxy.url, ...opts });

/** The artifact's bytes, downloaded. */
async function downloaded(client: CairnClient, id: string): Promise<Buffer> {
  const { body } = await client.download(id);
  return Buffer.from(await new Response(body).arrayBuffer());
}

/** A raw tus creation (no SDK): the upload URL. */
async function createRaw(size: number, filename: string): Promise<string> {
  const res = await tusFetch(`${s.apiUrl}/v1/uploads/tus`, s.apiKey, 'POST', {
    'Upload-Length': String(size),
    'Upload-Metadata': tusMetadata({ filename }),
  });
  expect(res.status, res.text).toBe(201);
  return new URL(res.headers.get('location') ?? '', s.apiUrl).href;
}

/** A raw PATCH of `bytes` (a complete body) at `offset`: the server's new offset. */
async function patchRaw(url: string, offset: number, bytes: Buffer): Promise<number> {
  const res = await tusFetch(
    url,
    s.apiKey,
    'PATCH',
    { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset) },
    bytes,
  );
  expect(res.status, res.text).toBe(204);
  return Number(res.headers.get('upload-offset'));
}

/** A listening server that is not Cairn: it records every request and answers 500. */
async function startBystander(): Promise<{ url: string; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '(no key)'}`);
    req.resume();
    req.on('end', () => res.writeHead(500).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

async function serverOffset(url: string): Promise<number | null> {
  const res = await tusFetch(url, s.apiKey, 'HEAD');
  return res.status === 404 ? null : Number(res.headers.get('upload-offset'));
}

beforeAll(async () => {
  s = await startTestServer();
  proxy = await new TusProxy(s.apiUrl).start();
  tmp = await tempFolder();
  content = randomBytes(6 * MB + 12_345);
  file = await tmp.write('big.bin', content);
});
afterAll(async () => {
  await proxy?.close();
  await s?.close();
  await tmp?.remove();
});
beforeEach(() => {
  proxy.reset();
});

describe('uploadResumable', { timeout: 60_000 }, () => {
  it('stores the file byte for byte, with the usual options, and reports monotone progress ending at the size', async () => {
    const client = clientFor(s);
    const progress: [number, number | null][] = [];
    const urls: string[] = [];
    const rec = await client.uploadResumable(file, {
      filename: 'data.bin',
      contentType: 'application/x-data',
      sessionId: 'tus-run',
      agentId: 'uploader',
      ttl: '7d',
      metadata: { stage: 'raw', n: 3, nested: { ok: true } },
      onProgress: (sent, total) => progress.push([sent, total]),
      onUploadUrl: (url) => {
        urls.push(url);
      },
    });
    expect(rec).toMatchObject({
      artifact_id: expect.stringMatching(ART_ID),
      filename: 'data.bin',
      content_type: 'application/x-data',
      size_bytes: content.length,
      content_hash: sha256(content),
      session_id: 'tus-run',
      agent_id: 'uploader',
      metadata: { stage: 'raw', n: 3, nested: { ok: true } },
    });
    expect(Date.parse(rec.expires_at ?? '') - Date.parse(rec.created_at)).toBe(7 * 86_400_000);
    expect(sha256(await downloaded(client, rec.artifact_id))).toBe(sha256(content));
    // The upload URL names the artifact (its last segment).
    expect(urls).toHaveLength(1);
    expect(artifactIdOfUploadUrl(urls[0] as string)).toBe(rec.artifact_id);
    expect(progress[0]).toEqual([0, content.length]);
    expect(progress.at(-1)).toEqual([content.length, content.length]);
    const sent = progress.map(([n]) => n);
    for (let i = 1; i < sent.length; i++) expect(sent[i]).toBeGreaterThan(sent[i - 1] as number);
    expect(progress.length).toBeGreaterThan(2);
  });

  it('chunkSize: one PATCH per piece, each from where the last ended; a bad chunkSize is refused before any request', async () => {
    const progress: number[] = [];
    const rec = await viaProxy().uploadResumable(file, {
      chunkSize: 2 * MB,
      onProgress: (sent) => progress.push(sent),
    });
    const patches = proxy.seen.filter((r) => r.method === 'PATCH');
    expect(patches.map((p) => Number(p.headers['upload-offset']))).toEqual([0, 2 * MB, 4 * MB, 6 * MB]);
    expect(patches.map((p) => p.bodyBytes)).toEqual([2 * MB, 2 * MB, 2 * MB, 12_345]);
    expect(rec.content_hash).toBe(sha256(content));
    for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThan(progress[i - 1] as number);
    expect(progress.at(-1)).toBe(content.length);

    proxy.reset();
    await expect(viaProxy().uploadResumable(file, { chunkSize: 0 })).rejects.toThrow(/chunkSize must be/);
    expect(proxy.seen).toEqual([]);
  });

  it('transcript: true and a filename with non-ASCII characters survive the base64 metadata', async () => {
    const ndjson = await tmp.write('t.ndjson', '{"role":"user","content":"hi"}\n');
    const rec = await clientFor(s).uploadResumable(ndjson, { filename: 'Überblick, “final”.ndjson', transcript: true });
    expect(rec.filename).toBe('Überblick, “final”.ndjson');
    expect(rec.metadata).toMatchObject({ type: 'transcript' });
  });

  it('onUploadUrl is awaited before any byte goes: the PATCH starts only once it has resolved', async () => {
    let resolvedAt = 0;
    let offsetThen: number | null = null;
    const rec = await viaProxy().uploadResumable(file, {
      onUploadUrl: async (url) => {
        offsetThen = await serverOffset(url.replace(proxy.url, s.apiUrl));
        await sleep(300);
        resolvedAt = Date.now();
      },
    });
    expect(offsetThen).toBe(0);
    const patch = proxy.seen.find((r) => r.method === 'PATCH');
    expect(patch?.at).toBeGreaterThanOrEqual(resolvedAt);
    expect(rec.size_bytes).toBe(content.length);
  });

  it('resumes an upload made elsewhere from the server offset, sending only the rest', async () => {
    const url = await createRaw(content.length, 'resumed.bin');
    const half = 2 * MB + 7;
    expect(await patchRaw(url, 0, content.subarray(0, half))).toBe(half);
    const progress: number[] = [];
    const urls: string[] = [];
    const rec = await viaProxy().uploadResumable(file, {
      uploadUrl: url.replace(s.apiUrl, proxy.url),
      onProgress: (sent) => progress.push(sent),
      onUploadUrl: (u) => {
        urls.push(u);
      },
    });
    expect(rec.artifact_id).toBe(artifactIdOfUploadUrl(url));
    expect(rec.filename).toBe('resumed.bin');
    expect(rec.content_hash).toBe(sha256(content));
    expect(progress[0]).toBe(half);
    expect(progress.at(-1)).toBe(content.length);
    expect(urls).toEqual([]); // picked up as it was: no new upload
    expect(proxy.lines().filter((l) => !l.startsWith('GET'))).toEqual([
      `HEAD /v1/uploads/tus/${rec.artifact_id}`,
      `PATCH /v1/uploads/tus/${rec.artifact_id}`,
    ]);
    expect(proxy.patchedBytes()).toBe(content.length - half);
    expect(sha256(await downloaded(clientFor(s), rec.artifact_id))).toBe(sha256(content));
  });

  it('an upload URL naming another origin is resumed on the configured server: that origin gets no request, no key', async () => {
    const bystander = await startBystander();
    try {
      const url = await createRaw(content.length, 'elsewhere.bin');
      const half = MB + 3;
      await patchRaw(url, 0, content.subarray(0, half));
      const foreign = url.replace(s.apiUrl, bystander.url);
      expect(foreign.startsWith(bystander.url)).toBe(true);
      const rec = await viaProxy().uploadResumable(file, { uploadUrl: foreign });
      expect(rec.artifact_id).toBe(artifactIdOfUploadUrl(url));
      expect(rec.content_hash).toBe(sha256(content));
      expect(proxy.lines()).toEqual([
        `HEAD /v1/uploads/tus/${rec.artifact_id}`,
        `PATCH /v1/uploads/tus/${rec.artifact_id}`,
        `GET /v1/artifacts/${rec.artifact_id}`,
      ]);
      expect(proxy.patchedBytes()).toBe(content.length - half);

      // Termination too goes to the configured server only.
      const other = await createRaw(content.length, 'abandoned.bin');
      proxy.reset();
      await viaProxy().terminateResumableUpload(other.replace(s.apiUrl, bystander.url));
      expect(proxy.lines()).toEqual([`DELETE /v1/uploads/tus/${artifactIdOfUploadUrl(other)}`]);
      expect(await serverOffset(other)).toBeNull();
      expect(bystander.seen).toEqual([]);
    } finally {
      await bystander.close();
    }
  });

  it("a Location naming another origin than the client's: the bytes still go to the client's base URL", async () => {
    // The server names its own origin; the client talks to it through the proxy (an internal name).
    proxy.rewriteLocation = false;
    const urls: string[] = [];
    const rec = await viaProxy().uploadResumable(file, {
      chunkSize: 4 * MB,
      onUploadUrl: (u) => {
        urls.push(u);
      },
    });
    expect(urls[0]?.startsWith(s.apiUrl)).toBe(true); // handed over as the server gave it
    expect(proxy.lines()).toEqual([
      'POST /v1/uploads/tus',
      `PATCH /v1/uploads/tus/${rec.artifact_id}`,
      `PATCH /v1/uploads/tus/${rec.artifact_id}`,
      `GET /v1/artifacts/${rec.artifact_id}`,
    ]);
    expect(rec.content_hash).toBe(sha256(content));
  });

  it('an upload URL whose path is not …/v1/uploads/tus/<id> is refused before any request', async () => {
    for (const bad of [
      `${proxy.url}/v1/artifacts/art_0000000000000000`,
      `${proxy.url}/v1/uploads/tus`,
      `${proxy.url}/v1/uploads/tus/`,
      'not a url',
    ]) {
      await expect(viaProxy().uploadResumable(file, { uploadUrl: bad })).rejects.toThrow(/Not a Cairn upload URL/);
      await expect(viaProxy().terminateResumableUpload(bad)).rejects.toThrow(/Not a Cairn upload URL/);
    }
    expect(proxy.seen).toEqual([]);
  });

  it("another file's upload URL (another length) is refused before any byte is sent", async () => {
    const url = await createRaw(content.length + 1, 'other.bin');
    const err = await caught(() => viaProxy().uploadResumable(file, { uploadUrl: url.replace(s.apiUrl, proxy.url) }));
    expect((err as Error).message).toMatch(/is \d+ bytes long, the file \d+: it is not this file's upload/);
    expect(proxy.lines().map((l) => l.split(' ')[0])).toEqual(['HEAD']);
    expect(await serverOffset(url)).toBe(0);
  });

  it('a connection dropped mid-PATCH: HEAD, then the rest from the bytes the server kept', async () => {
    proxy.cutNextPatchAfter(3 * MB);
    const progress: number[] = [];
    const rec = await viaProxy().uploadResumable(file, { onProgress: (sent) => progress.push(sent) });
    const id = rec.artifact_id;
    const lines = proxy.lines();
    expect(lines.slice(0, 3)).toEqual([
      'POST /v1/uploads/tus',
      `PATCH /v1/uploads/tus/${id}`,
      `HEAD /v1/uploads/tus/${id}`,
    ]);
    expect(lines.slice(-2)).toEqual([`PATCH /v1/uploads/tus/${id}`, `GET /v1/artifacts/${id}`]);
    // The PATCH that finished started where the server was, not at 0: the bytes that arrived before
    // the drop were not sent again. (On a busy machine the server may still hold the cut PATCH at
    // the first HEAD: a 409 and another HEAD in between are fine.)
    const patches = proxy.seen.filter((r) => r.method === 'PATCH');
    expect(patches[0]?.bodyBytes).toBe(3 * MB);
    const last = patches.at(-1);
    expect(Number(last?.headers['upload-offset'])).toBe(3 * MB);
    expect(last?.bodyBytes).toBe(content.length - 3 * MB);
    for (let i = 1; i < progress.length; i++) {
      expect(progress[i] as number).toBeGreaterThan(progress[i - 1] as number);
    }
    expect(progress.at(-1)).toBe(content.length);
    expect(sha256(await downloaded(clientFor(s), id))).toBe(sha256(content));
  });

  it('a 503, a 409 and a 429 on PATCH are each followed by a HEAD and another PATCH; Retry-After is honoured', async () => {
    const envelope = (status: number, code: string) => ({ error: { code, message: `injected ${code}`, status } });
    proxy
      .answerNext('PATCH', '/v1/uploads/tus/', { status: 503, body: envelope(503, 'unavailable') })
      .answerNext('PATCH', '/v1/uploads/tus/', { status: 409, body: envelope(409, 'upload_offset_conflict') })
      .answerNext('PATCH', '/v1/uploads/tus/', {
        status: 429,
        headers: { 'retry-after': '1' },
        body: envelope(429, 'rate_limited'),
      });
    const rec = await viaProxy({ maxRetries: 3 }).uploadResumable(file);
    const methods = proxy.lines().map((l) => l.split(' ')[0]);
    expect(methods).toEqual(['POST', 'PATCH', 'HEAD', 'PATCH', 'HEAD', 'PATCH', 'HEAD', 'PATCH', 'GET']);
    expect(rec.content_hash).toBe(sha256(content));
    // The 429 said one second: the HEAD after it waited that long (the other two, a short backoff).
    const [rateLimitedPatch, headAfter] = [proxy.seen[5], proxy.seen[6]];
    expect((headAfter?.at ?? 0) - (rateLimitedPatch?.at ?? 0)).toBeGreaterThanOrEqual(1000);
    expect((proxy.seen[2]?.at ?? 0) - (proxy.seen[1]?.at ?? 0)).toBeLessThan(1000);
  });

  it('a 409 while another PATCH holds the upload is waited out, not counted as a failure, then the rest goes', async () => {
    const tenantId = (await s.core.tenants.byName('main')).id;
    let cut: NodeJS.Timeout | undefined;
    const rec = await viaProxy({ maxRetries: 0 }).uploadResumable(file, {
      // Between the creation and the SDK's first PATCH, another client's PATCH takes the upload:
      // a megabyte, then silence, holding it until that connection is cut 3 s later.
      onUploadUrl: async (proxied) => {
        const url = new URL(new URL(proxied).pathname, s.apiUrl);
        const other = http.request(url, {
          method: 'PATCH',
          headers: {
            ...TUS,
            authorization: `Bearer ${s.apiKey}`,
            'content-type': 'application/offset+octet-stream',
            'upload-offset': '0',
            'content-length': String(content.length),
          },
        });
        other.on('error', () => {});
        other.write(content.subarray(0, MB));
        const id = artifactIdOfUploadUrl(proxied);
        while (!(await s.core.deps.resumables.getResumable(tenantId, id))?.leaseOwner) await sleep(10);
        cut = setTimeout(() => other.destroy(), 3_000);
      },
    });
    clearTimeout(cut);
    // The first PATCH met the other one's hold (409, with no retries left for a failure); the HEAD
    // after it waited for that hold to end, and the rest went from where the other PATCH stopped.
    const patches = proxy.seen.filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => Number(r.headers['upload-offset']))).toEqual([0, MB]);
    expect(rec.content_hash).toBe(sha256(content));
  });

  it('gives up after 1 + maxRetries failures in a row without progress, with the server error', async () => {
    const envelope = { error: { code: 'unavailable', message: 'injected', status: 503 } };
    for (let i = 0; i < 3; i++) proxy.answerNext('PATCH', '/v1/uploads/tus/', { status: 503, body: envelope });
    const err = await caught(() => viaProxy({ maxRetries: 2 }).uploadResumable(file));
    expect(err).toBeInstanceOf(CairnError);
    expect(err).toMatchObject({ status: 503, code: 'unavailable' });
    expect(proxy.lines().filter((l) => l.startsWith('PATCH'))).toHaveLength(3);
  });

  it('an upload URL the server no longer knows (terminated) starts a new upload, reported by onUploadUrl', async () => {
    const url = await createRaw(content.length, 'gone.bin');
    await patchRaw(url, 0, content.subarray(0, MB));
    const client = clientFor(s);
    await client.terminateResumableUpload(url);
    expect(await serverOffset(url)).toBeNull();
    await client.terminateResumableUpload(url); // already gone: no error
    const urls: string[] = [];
    const progress: number[] = [];
    const rec = await client.uploadResumable(file, {
      uploadUrl: url,
      onUploadUrl: (u) => {
        urls.push(u);
      },
      onProgress: (sent) => progress.push(sent),
    });
    expect(urls).toHaveLength(1);
    expect(urls[0]).not.toBe(url);
    expect(rec.artifact_id).toBe(artifactIdOfUploadUrl(urls[0] as string));
    expect(progress[0]).toBe(0);
    expect(rec.content_hash).toBe(sha256(content));
  });

  it('the same idempotency key again replays the finished upload: nothing is sent, the same artifact comes back', async () => {
    const client = clientFor(s);
    const first = await client.uploadResumable(file, { idempotencyKey: 'tus-replay-1' });
    let replayed: boolean | undefined;
    const again = await viaProxy().uploadResumable(file, {
      idempotencyKey: 'tus-replay-1',
      onResponse: (r) => {
        replayed = r.replayed;
      },
    });
    expect(replayed).toBe(true);
    expect(again.artifact_id).toBe(first.artifact_id);
    expect(proxy.seen[0]?.headers['idempotency-key']).toBe('tus-replay-1');
    expect(proxy.patchedBytes()).toBe(0);
  });

  it('refusals before any byte are CairnErrors with the envelope: a bad field, a file over the plan limit', async () => {
    const bad = await caught(() => clientFor(s).uploadResumable(file, { ttl: 'forever' }));
    expect(bad).toBeInstanceOf(CairnError);
    expect(bad).toMatchObject({ status: 400, code: 'invalid_request' });

    // Free plan: at most 500 MiB (524,288,000 bytes). A sparse file one byte over is refused at creation.
    const freeKey = await s.createTenant('free-tus', 'free');
    const huge = `${tmp.dir}/huge.bin`;
    const fh = await open(huge, 'w');
    await fh.truncate(524_288_001);
    await fh.close();
    const tooBig = await caught(() => new CairnClient({ apiKey: freeKey, baseUrl: s.apiUrl }).uploadResumable(huge));
    expect(tooBig).toBeInstanceOf(CairnError);
    expect(tooBig).toMatchObject({ status: 413, code: 'file_too_large' });
  });

  it('resumableUploadSupport says what the endpoint offers, and null on a server without one (404)', async () => {
    const support = await clientFor(s).resumableUploadSupport();
    expect(support).toMatchObject({ version: '1.0.0', maxSize: 5_368_709_120 });
    expect(support?.extensions).toEqual(expect.arrayContaining(['creation', 'termination']));
    proxy.answerNext('OPTIONS', '/v1/uploads/tus', {
      status: 404,
      body: { error: { code: 'not_found', message: 'No route OPTIONS /v1/uploads/tus.', status: 404 } },
    });
    expect(await viaProxy().resumableUploadSupport()).toBeNull();
  });
});
