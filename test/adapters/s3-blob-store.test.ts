import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import { ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { S3BlobStore, type S3BlobStoreOptions } from '../../src/adapters/s3-blobs/index.js';
import { blobStoreContract } from '../contract/blob-store.contract.js';
import { startTestS3, type TestS3 } from '../helpers/test-s3.js';

/** s3rver, or the engine CAIRN_TEST_S3_ENDPOINT names (test/helpers/test-s3.ts). */
let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3?.close();
});

let bucketSeq = 0;
/** A fresh bucket per store: tests never see each other's objects. */
function options(over: Partial<S3BlobStoreOptions> = {}): S3BlobStoreOptions {
  return {
    bucket: `cairn-test-${++bucketSeq}-${randomBytes(3).toString('hex')}`,
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: s3.credentials,
    ...over,
  };
}

blobStoreContract('s3', async () => {
  const store = new S3BlobStore(options({ prefix: 'contract/' }));
  return { store, cleanup: () => store.close() };
}, ['presignGet', 'presignUpload']);

describe('S3BlobStore specifics', () => {
  let store: S3BlobStore;
  let opts: S3BlobStoreOptions;
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const keyOf = (b: Buffer) => `ten_test/${sha(b)}`;

  beforeEach(async () => {
    opts = options({ prefix: 'p/' });
    store = new S3BlobStore(opts);
    await store.init();
  });
  afterEach(async () => {
    await store.close();
  });

  async function keys(prefix = ''): Promise<string[]> {
    const out = await store.client.send(new ListObjectsV2Command({ Bucket: opts.bucket, Prefix: prefix }));
    return (out.Contents ?? []).map((o) => o.Key!).sort();
  }

  /**
   * The S3 commands a store sends, recorded at the SDK's first middleware step. s3rver cannot
   * list (or even abort) multipart uploads, so this is how a test sees that a failed multipart
   * upload was aborted rather than left for the bucket's lifecycle rule (a real engine is also
   * asked, see noMultipartUploadsLeft).
   */
  function recordCommands(s: S3BlobStore): string[];
  function recordCommands(s: S3BlobStore, withInput: true): { name: string; input: unknown }[];
  function recordCommands(s: S3BlobStore, withInput = false): (string | { name: string; input: unknown })[] {
    const sent: (string | { name: string; input: unknown })[] = [];
    s.client.middlewareStack.add(
      (next, context) => async (args) => {
        const name = String(context.commandName);
        sent.push(withInput ? { name, input: args.input } : name);
        return next(args);
      },
      { step: 'initialize' },
    );
    return sent;
  }

  /** On an engine that lists multipart uploads (not s3rver): none is left unfinished in the bucket. */
  async function noMultipartUploadsLeft(): Promise<void> {
    if (s3.engine === 's3rver') return;
    const listed = await store.client.send(new ListMultipartUploadsCommand({ Bucket: opts.bucket }));
    expect(listed.Uploads ?? []).toEqual([]);
  }

  /** A source that yields `chunks` chunks of `size` bytes, then optionally fails. */
  function source(chunks: number, size: number, failWith?: Error): Readable {
    let n = 0;
    return new Readable({
      read() {
        if (n < chunks) {
          n++;
          this.push(randomBytes(size));
        } else if (failWith) this.destroy(failWith);
        else this.push(null);
      },
    });
  }

  it('stages through a multipart upload and commits under the prefix', async () => {
    // 13 MiB with 5 MiB parts: three parts, hashed and counted on the way.
    const body = randomBytes(13 * 1024 * 1024);
    const s = new S3BlobStore({ ...opts, partSizeBytes: 5 * 1024 * 1024 });
    const staged = await s.stage(Readable.from([body.subarray(0, 7_000_000), body.subarray(7_000_000)]), body.length);
    expect(staged).toMatchObject({ sizeBytes: body.length, sha256: sha(body) });
    expect(await keys('p/staging/')).toEqual([`p/staging/${staged.stagingId}`]);
    await s.commit(staged, keyOf(body));
    await s.discard(staged);
    expect(await keys()).toEqual([`p/${keyOf(body)}`]);
    expect(await s.stat(keyOf(body))).toEqual({ sizeBytes: body.length });
    expect(await buffer(await s.read(keyOf(body), { start: 10, end: 19 }))).toEqual(body.subarray(10, 20));
    // Buffer.equals: vitest's deep equality walks 13 MiB byte by byte for minutes.
    expect((await buffer(await s.read(keyOf(body)))).equals(body)).toBe(true);
    await s.close();
  });

  it('refuses more than maxBytes mid-stream, aborting the multipart upload', async () => {
    const s = new S3BlobStore({ ...opts, partSizeBytes: 5 * 1024 * 1024 });
    const sent = recordCommands(s);
    // Two 5 MiB parts are uploaded before the 13th MiB passes the limit.
    const big = source(32, 1024 * 1024);
    await expect(s.stage(big, 12 * 1024 * 1024)).rejects.toMatchObject({ code: 'file_too_large' });
    expect(big.destroyed).toBe(true);
    expect(sent).toContain('UploadPartCommand');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
    const small = source(3, 1000);
    await expect(s.stage(small, 2500)).rejects.toMatchObject({ code: 'file_too_large' });
    expect(await keys()).toEqual([]);
    await noMultipartUploadsLeft();
    await s.close();
  });

  it('rejects with the source error and leaves nothing behind', async () => {
    const s = new S3BlobStore({ ...opts, partSizeBytes: 5 * 1024 * 1024 });
    const sent = recordCommands(s);
    const boom = new Error('client went away');
    await expect(s.stage(source(12, 1024 * 1024, boom), 100 * 1024 * 1024)).rejects.toBe(boom);
    expect(sent).toContain('AbortMultipartUploadCommand');
    await expect(s.stage(source(1, 10, boom), 1000)).rejects.toBe(boom);
    expect(await keys()).toEqual([]);
    await noMultipartUploadsLeft();
    await s.close();
  });

  it('keeps existing bytes when the content address is taken, and drops the staged copy', async () => {
    const body = Buffer.from('same bytes');
    const first = await store.stage(Readable.from([body]), 100);
    await store.commit(first, keyOf(body));
    const second = await store.stage(Readable.from([body]), 100);
    await store.commit(second, keyOf(body));
    await store.discard(second);
    await store.discard(second);
    expect(await keys()).toEqual([`p/${keyOf(body)}`]);
    expect(await text(await store.read(keyOf(body)))).toBe('same bytes');
  });

  it('rejects reads of missing keys and deletes quietly', async () => {
    const missing = `ten_test/${'0'.repeat(64)}`;
    await expect(store.read(missing)).rejects.toThrow();
    expect(await store.stat(missing)).toBeNull();
    await store.delete(missing);
    await expect(store.stat('../etc/passwd')).rejects.toThrow(/invalid blob key/);
  });

  it('init creates the bucket and removes only stale staging objects', async () => {
    await store.client.send(
      new PutObjectCommand({ Bucket: opts.bucket, Key: `p/staging/${'a'.repeat(32)}`, Body: 'left over' }),
    );
    // A second instance starting now must not remove an upload that may be in flight.
    const fresh = new S3BlobStore(opts);
    await fresh.init();
    expect(await keys('p/staging/')).toHaveLength(1);
    await fresh.close();
    await new Promise((r) => setTimeout(r, 1_100)); // LastModified has one-second resolution
    const sweeping = new S3BlobStore({ ...opts, staleStagingMs: 500 });
    await sweeping.init();
    expect(await keys('p/staging/')).toEqual([]);
    await sweeping.close();
  });

  it('presigns a GET that S3 answers as a named attachment', async () => {
    const body = Buffer.from('# hello\n');
    const staged = await store.stage(Readable.from([body]), 100);
    await store.commit(staged, keyOf(body));
    const url = await store.presignGet(keyOf(body), 'résumé "final".md', 'text/markdown', 60);
    expect(url).toContain('X-Amz-Expires=60');
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('# hello\n');
    expect(res.headers.get('content-type')).toBe('text/markdown');
    expect(res.headers.get('content-disposition')).toBe(
      `attachment; filename="r_sum_ _final_.md"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.md`,
    );
    if (s3.checksPresignedUrls) {
      // The signature covers the response headers asked for: another file name is refused.
      const tampered = new URL(url);
      tampered.searchParams.set('response-content-disposition', 'attachment; filename="other.html"');
      const refused = await fetch(tampered);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('SignatureDoesNotMatch');
    }
  });

  it('presigns a PUT of exactly the declared size and stages what landed', async () => {
    const body = randomBytes(300_000);
    const landing = 'uploads/ten_test/art_0123456789abcdef';
    expect(await store.stageLanded(landing, body.length)).toBeNull();
    const { url, headers } = await store.presignUpload(landing, body.length, 60);
    expect(headers).toEqual({ 'Content-Length': String(body.length) });
    expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe('content-length;host');
    const tooLong = Buffer.concat([body, Buffer.from('x')]);
    if (s3.checksPresignedUrls) {
      // The length is signed: S3 refuses one byte too many or too few at the PUT, and nothing lands.
      for (const wrong of [tooLong, body.subarray(1)]) {
        const refused = await fetch(url, { method: 'PUT', body: wrong });
        expect(refused.status).toBe(403);
        expect(await refused.text()).toContain('SignatureDoesNotMatch');
      }
      expect(await store.stageLanded(landing, body.length)).toBeNull();
    } else {
      // s3rver checks no presigned signature: too many bytes land, and staging refuses them.
      expect((await fetch(url, { method: 'PUT', body: tooLong })).status).toBe(200);
      await expect(store.stageLanded(landing, body.length)).rejects.toMatchObject({ code: 'file_too_large' });
    }
    const put = await fetch(url, { method: 'PUT', headers, body });
    expect(put.status).toBe(200);
    const staged = await store.stageLanded(landing, body.length);
    expect(staged).toMatchObject({ sizeBytes: body.length, sha256: sha(body) });
    await store.commit(staged!, keyOf(body));
    await store.discard(staged!);
    // The landing object stays until the core says the artifact is active.
    expect(await keys()).toEqual([`p/${keyOf(body)}`, `p/${landing}`]);
    await store.dropLanded(landing);
    await store.dropLanded(landing);
    expect(await keys()).toEqual([`p/${keyOf(body)}`]);
    await expect(store.presignUpload('../x', 1, 60)).rejects.toThrow(/invalid landing key/);
    await expect(store.dropLanded('staging/x')).rejects.toThrow(/invalid landing key/);
  });

  it('completes a landed upload with one read and one server-side copy, conditional on what was read', async () => {
    const body = randomBytes(6 * 1024 * 1024);
    const landing = 'uploads/ten_test/art_copyonce0000000';
    const { url, headers } = await store.presignUpload(landing, body.length, 60);
    expect((await fetch(url, { method: 'PUT', headers, body })).status).toBe(200);
    const sent = recordCommands(store, true);
    const staged = await store.stageLanded(landing, body.length);
    await store.commit(staged!, keyOf(body));
    await store.discard(staged!);
    expect(sent.map((c) => c.name)).toEqual(['GetObjectCommand', 'HeadObjectCommand', 'CopyObjectCommand']);
    const copy = sent[2]!.input as { CopySource: string; CopySourceIfMatch?: string; Key: string };
    expect(copy.CopySource).toBe(`${opts.bucket}/p/${landing}`);
    expect(copy.Key).toBe(`p/${keyOf(body)}`);
    // The ETag S3 gave with the bytes that were hashed: other bytes PUT meanwhile are not copied.
    expect(copy.CopySourceIfMatch).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await buffer(await store.read(keyOf(body)))).equals(body)).toBe(true);
  });

  it('does not copy a landed object PUT again after it was hashed: the copy is conditional', async (ctx) => {
    // s3rver copies whatever is there; RGW honours the condition only under its own header name,
    // which Cairn sends beside S3's (LandingArea.copyTo).
    if (!s3.honoursCopyConditions) ctx.skip();
    const body = randomBytes(1000);
    const landing = 'uploads/ten_test/art_changed000000000';
    const { url, headers } = await store.presignUpload(landing, body.length, 60);
    expect((await fetch(url, { method: 'PUT', headers, body })).status).toBe(200);
    const staged = await store.stageLanded(landing, body.length);
    // The URL is still valid: other bytes of the same length replace what was hashed.
    expect((await fetch(url, { method: 'PUT', headers, body: randomBytes(1000) })).status).toBe(200);
    await expect(store.commit(staged!, keyOf(body))).rejects.toThrow(/changed while it was being completed/);
    expect(await store.stat(keyOf(body))).toBeNull();
  });

  it('sweeps landed objects older than the cut-off only', async () => {
    const old = 'uploads/ten_test/art_old0000000000000';
    const fresh = 'uploads/ten_test/art_new0000000000000';
    await store.client.send(new PutObjectCommand({ Bucket: opts.bucket, Key: `p/${old}`, Body: 'abandoned' }));
    await new Promise((r) => setTimeout(r, 1_100)); // LastModified has one-second resolution
    const cutoff = Date.now() - 1000; // a fresh object may show up to 999 ms older than it is
    await store.client.send(new PutObjectCommand({ Bucket: opts.bucket, Key: `p/${fresh}`, Body: 'in flight' }));
    expect(await store.sweepLandings(cutoff)).toBe(1);
    expect(await keys('p/uploads/')).toEqual([`p/${fresh}`]);
    expect(await store.sweepLandings(cutoff)).toBe(0);
  });
});
