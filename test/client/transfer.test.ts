import { createReadStream } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { type CairnClient, CairnError, deriveIdempotencyKey, deriveSuccessorKey, sha256File } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ART_ID, caught, clientFor, sha256, tempFolder } from './fixtures.js';

/** The SDK's uploads (multipart file/stream, JSON bytes, presigned), downloads and links. */

let s: TestServer;
let client: CairnClient;
let tmp: Awaited<ReturnType<typeof tempFolder>>;

beforeAll(async () => {
  s = await startTestServer();
  client = clientFor(s);
  tmp = await tempFolder();
});
afterAll(async () => {
  await s?.close();
  await tmp?.remove();
});

const bytesOf = (n: number, seed = 1) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff));

describe('uploadFile', () => {
  it('streams a file with every option; filename defaults to the basename', async () => {
    const content = bytesOf(200_000);
    const file = await tmp.write('report.bin', content);
    const progress: [number, number | null][] = [];
    const rec = await client.uploadFile(file, {
      contentType: 'application/x-custom',
      sessionId: 'up-s1',
      agentId: 'agent-7',
      metadata: { kind: 'dump', n: 2 },
      ttl: '2d',
      onProgress: (sent, total) => progress.push([sent, total]),
    });
    expect(rec.artifact_id).toMatch(ART_ID);
    expect(rec).toMatchObject({
      filename: 'report.bin',
      content_type: 'application/x-custom',
      size_bytes: content.length,
      content_hash: sha256(content),
      metadata: { kind: 'dump', n: 2 },
      session_id: 'up-s1',
      agent_id: 'agent-7',
      page: null,
    });
    const ttlMs = Date.parse(rec.expires_at!) - Date.parse(rec.created_at);
    expect(ttlMs).toBe(2 * 86_400_000);
    expect(progress[0]).toEqual([0, content.length]);
    expect(progress.at(-1)).toEqual([content.length, content.length]);
    expect(await sha256File(file)).toBe(rec.content_hash);
  });

  it('sends an explicit filename (quotes, non-ASCII) and lets the server infer the type', async () => {
    const file = await tmp.write('x.md', '# hi');
    const rec = await client.uploadFile(file, { filename: 'say "héllo".md' });
    expect(rec.filename).toBe('say "héllo".md');
    expect(rec.content_type).toBe('text/markdown');
    const plain = await client.uploadFile(await tmp.write('notes.csv', 'a,b\n'));
    expect(plain.content_type).toBe('text/csv');
  });

  it('transcript marks the metadata and defaults the type to NDJSON', async () => {
    const rec = await client.uploadFile(await tmp.write('run.log', '{"role":"user"}\n'), { transcript: true });
    expect(rec.metadata).toMatchObject({ type: 'transcript' });
    expect(rec.content_type).toBe('application/x-ndjson');
  });

  it('an empty file uploads with the hash of nothing', async () => {
    const rec = await client.uploadFile(await tmp.write('empty.txt', ''));
    expect(rec).toMatchObject({ size_bytes: 0, content_hash: sha256('') });
  });

  it('the same idempotency key replays the first artifact', async () => {
    const file = await tmp.write('idem.txt', 'same bytes');
    const key = deriveIdempotencyKey({ contentHash: await sha256File(file), filename: 'idem.txt', sessionId: 'idem' });
    expect(key).toMatch(/^cairn-[0-9a-f]{64}$/);
    const first = await client.uploadFile(file, { sessionId: 'idem', idempotencyKey: key });
    const second = await client.uploadFile(file, { sessionId: 'idem', idempotencyKey: key });
    expect(second).toEqual(first);
    expect((await client.listArtifacts({ sessionId: 'idem' })).artifacts).toHaveLength(1);
  });

  it('onResponse tells a replay (Idempotent-Replayed) from a fresh upload', async () => {
    const file = await tmp.write('replay.txt', 'replayed?');
    const seen: boolean[] = [];
    const opts = { idempotencyKey: 'replay-probe-1', onResponse: (r: { replayed: boolean }) => seen.push(r.replayed) };
    await client.uploadFile(file, opts);
    await client.uploadFile(file, opts);
    await client.uploadBytes('x', { filename: 'b.txt', ...opts, idempotencyKey: 'replay-probe-2' });
    await client.uploadBytes('x', { filename: 'b.txt', ...opts, idempotencyKey: 'replay-probe-2' });
    expect(seen).toEqual([false, true, false, true]);
  });

  it('derived keys change with everything that shapes the record, not with metadata key order', () => {
    const base = { contentHash: 'a'.repeat(64), filename: 'f.txt', sessionId: 's', agentId: 'g' };
    const k = deriveIdempotencyKey({ ...base, metadata: { a: '1', b: { c: 2, d: 3 } } });
    expect(deriveIdempotencyKey({ ...base, metadata: { b: { d: 3, c: 2 }, a: '1' } })).toBe(k);
    const variants = [
      { ...base },
      { ...base, metadata: { a: '2', b: { c: 2, d: 3 } } },
      { ...base, metadata: { a: '1', b: { c: 2, d: 3 } }, ttl: '7d' },
      { ...base, metadata: { a: '1', b: { c: 2, d: 3 } }, transcript: true },
      { ...base, metadata: { a: '1', b: { c: 2, d: 3 } }, contentType: 'text/plain' },
      { ...base, metadata: { a: '1', b: { c: 2, d: 3 } }, sessionId: 't' },
      { ...base, metadata: { a: '1', b: { c: 2, d: 3 } }, agentId: 'h' },
      { ...base, metadata: { a: '1', b: { c: 2, d: 3 } }, filename: 'g.txt' },
    ];
    const keys = variants.map(deriveIdempotencyKey);
    expect(new Set([k, ...keys]).size).toBe(variants.length + 1);
    expect(deriveSuccessorKey(k, 'art_AAAAAAAAAAAAAAAA')).toMatch(/^cairn-[0-9a-f]{64}$/);
    expect(deriveSuccessorKey(k, 'art_AAAAAAAAAAAAAAAA')).toBe(deriveSuccessorKey(k, 'art_AAAAAAAAAAAAAAAA'));
    expect(deriveSuccessorKey(k, 'art_BBBBBBBBBBBBBBBB')).not.toBe(deriveSuccessorKey(k, 'art_AAAAAAAAAAAAAAAA'));
  });

  it('a missing file rejects before any request', async () => {
    const err = await caught(() => client.uploadFile(path.join(tmp.dir, 'nope.txt')));
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('server refusals are typed: a sealed session is session_sealed', async () => {
    await client.uploadBytes('x', { filename: 'x.txt', sessionId: 'sealed-up' });
    await client.sealSession('sealed-up');
    // Kept small: the server answers before reading the file, and (a server-side issue, see the
    // SDK report) leaves a connection whose unread body exceeds the socket buffers open forever.
    const file = await tmp.write('sealed.bin', bytesOf(16 * 1024, 8));
    const err = await caught(() => client.uploadFile(file, { sessionId: 'sealed-up' }));
    expect(err).toBeInstanceOf(CairnError);
    expect(err).toMatchObject({ code: 'session_sealed', status: 409 });
  });
});

describe('uploadStream', () => {
  it('takes a Node Readable of unknown size (chunked)', async () => {
    const parts = [bytesOf(70_000, 2), bytesOf(1, 3), bytesOf(90_000, 4)];
    const all = Buffer.concat(parts);
    const rec = await client.uploadStream(Readable.from(parts), { filename: 'chunks.bin', metadata: { via: 'node' } });
    expect(rec).toMatchObject({ filename: 'chunks.bin', size_bytes: all.length, content_hash: sha256(all) });
  });

  it('takes a web ReadableStream with a known size', async () => {
    const file = await tmp.write('web.bin', bytesOf(123_457, 5));
    const web = Readable.toWeb(createReadStream(file)) as unknown as ReadableStream<Uint8Array>;
    let last = 0;
    const rec = await client.uploadStream(web, {
      filename: 'web.bin',
      size: 123_457,
      onProgress: (sent) => {
        last = sent;
      },
    });
    expect(rec.content_hash).toBe(await sha256File(file));
    expect(last).toBe(123_457);
  });

  it('a stream shorter than the declared size fails without storing anything', async () => {
    const before = (await client.whoami()).usage_storage_bytes;
    await expect(
      client.uploadStream(Readable.from([bytesOf(10, 6)]), { filename: 'short.bin', size: 20, sessionId: 'short' }),
    ).rejects.toThrow();
    expect((await client.listArtifacts({ sessionId: 'short' })).artifacts).toEqual([]);
    expect((await client.whoami()).usage_storage_bytes).toBe(before);
  });
});

describe('uploadBytes', () => {
  it('sends strings as UTF-8 and bytes as they are', async () => {
    const text = await client.uploadBytes('héllo wörld', { filename: 'w.txt', agentId: 'a1', ttl: 'never' });
    expect(text).toMatchObject({ size_bytes: Buffer.byteLength('héllo wörld'), content_hash: sha256('héllo wörld') });
    expect(text.agent_id).toBe('a1');
    const raw = new Uint8Array([0, 255, 1, 254]);
    const bin = await client.uploadBytes(raw, { filename: 'b.bin', contentType: 'application/x-raw' });
    expect(bin).toMatchObject({ size_bytes: 4, content_hash: sha256(raw), content_type: 'application/x-raw' });
  });
});

describe('downloads', () => {
  it('getDownloadUrl, download and downloadToFile round-trip the bytes', async () => {
    const content = bytesOf(300_000, 9);
    const rec = await client.uploadFile(await tmp.write('round.bin', content));
    const info = await client.getDownloadUrl(rec.artifact_id);
    expect(info).toMatchObject({ expires_in: 3600, filename: 'round.bin', size_bytes: content.length });
    expect(info.download_url.startsWith(s.contentUrl)).toBe(true);

    const dl = await client.download(rec.artifact_id);
    expect(dl).toMatchObject({ sizeBytes: content.length, filename: 'round.bin' });
    expect(Buffer.from(await new Response(dl.body).arrayBuffer()).equals(content)).toBe(true);

    const out = path.join(tmp.dir, 'out', 'round-copy.bin');
    await import('node:fs/promises').then((fs) => fs.mkdir(path.dirname(out), { recursive: true }));
    let received = 0;
    const done = await client.downloadToFile(rec.artifact_id, out, {
      onProgress: (n) => {
        received = n;
      },
    });
    expect(done).toEqual({ path: out, sizeBytes: content.length });
    expect(received).toBe(content.length);
    expect((await readFile(out)).equals(content)).toBe(true);
    expect(await readdir(path.dirname(out))).toEqual(['round-copy.bin']);
  });

  it('a deleted artifact fails before any file is created', async () => {
    const rec = await client.uploadBytes('gone', { filename: 'gone.txt' });
    await client.deleteArtifact(rec.artifact_id);
    const out = path.join(tmp.dir, 'gone-out');
    await import('node:fs/promises').then((fs) => fs.mkdir(out));
    const err = await caught(() => client.downloadToFile(rec.artifact_id, path.join(out, 'gone.txt')));
    expect(err).toMatchObject({ code: 'artifact_already_deleted', status: 410 });
    expect(await readdir(out)).toEqual([]);
  });
});

describe('createLink', () => {
  it('makes a link whose URL serves the bytes without a key', async () => {
    const rec = await client.uploadBytes('linked', { filename: 'l.txt' });
    const link = await client.createLink(rec.artifact_id, { expiresIn: 3600 });
    expect(link.link_id).toMatch(/^lnk_[A-Za-z0-9]{20}$/);
    expect(link.artifact_id).toBe(rec.artifact_id);
    expect(Date.parse(link.expires_at) - Date.parse(link.created_at)).toBe(3_600_000);
    const res = await fetch(link.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('linked');
    const dflt = await client.createLink(rec.artifact_id);
    expect(Date.parse(dflt.expires_at) - Date.parse(dflt.created_at)).toBe(604_800_000);
    expect(await caught(() => client.createLink(rec.artifact_id, { expiresIn: 99_999_999 }))).toMatchObject({
      code: 'invalid_request',
    });
  });
});

describe('presigned upload', () => {
  it('requestUploadUrl → putUpload → completeUpload', async () => {
    const content = bytesOf(2 * 1024 * 1024 + 5, 11);
    const file = await tmp.write('big.bin', content);
    const ticket = await client.requestUploadUrl({
      filename: 'big.bin',
      sizeBytes: content.length,
      sessionId: 'pre-s',
      metadata: { via: 'presigned' },
    });
    expect(ticket).toMatchObject({ status: 'pending', upload_method: 'PUT' });
    expect(await caught(() => client.completeUpload(ticket.artifact_id))).toMatchObject({
      code: 'upload_not_found',
      status: 409,
    });
    let sent = 0;
    await client.putUpload(ticket, file, {
      onProgress: (n) => {
        sent = n;
      },
    });
    expect(sent).toBe(content.length);
    const rec = await client.completeUpload(ticket.artifact_id);
    expect(rec).toMatchObject({
      artifact_id: ticket.artifact_id,
      size_bytes: content.length,
      content_hash: sha256(content),
      session_id: 'pre-s',
      metadata: { via: 'presigned' },
    });
    expect(await client.completeUpload(ticket.artifact_id)).toEqual(rec);
  });

  it('is Pro only: a free tenant gets a typed error with upgradeUrl', async () => {
    const free = clientFor(s, { apiKey: await s.createTenant('free-pre', 'free') });
    const err = await caught(() => free.requestUploadUrl({ filename: 'a.bin', sizeBytes: 10 }));
    expect(err).toBeInstanceOf(CairnError);
    expect((err as CairnError).status).toBeGreaterThanOrEqual(400);
    expect(typeof (err as CairnError).upgradeUrl).toBe('string');
  });
});
