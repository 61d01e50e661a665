import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { BlobStore, ByteRange, LandResult, StagedBlob } from '../../ports/blob-store.js';
import { HashCounter } from '../blob-common/hash-counter.js';
import { attachmentDisposition } from './content-disposition.js';
import { isLanded, LandingArea } from './landing-area.js';
import { copySource, deleteOlderThan, deleteQuietly, errorName, isNotFound } from './s3-objects.js';

export interface S3BlobStoreOptions {
  bucket: string;
  /** For S3-compatible services (R2, MinIO, …); omit for AWS S3. */
  endpoint?: string;
  /** Default `us-east-1` (R2 wants `auto`). */
  region?: string;
  /** Path-style URLs (`endpoint/bucket/key`), needed by MinIO and most self-hosted servers. */
  forcePathStyle?: boolean;
  /** Default: the SDK's chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles, instance roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Prepended to every object key, e.g. `cairn/`, to share a bucket. Default none. */
  prefix?: string;
  /** `init` removes staging objects older than this (default 6 h: far longer than any upload). */
  staleStagingMs?: number;
  /** Multipart part size while staging (default 8 MiB; S3's minimum is 5 MiB). */
  partSizeBytes?: number;
}

/** The same key shape the core builds (`<tenantId>/<sha256>`); anything else is a bug, refused early. */
const KEY = /^[A-Za-z0-9_]{1,64}\/[0-9a-f]{64}$/;
const STAGING_ID = /^[0-9a-f]{32}$/;
/** CopyObject copies at most 5 GiB in one request; Cairn's largest upload (presigned) is 5 GiB. */
const MAX_SINGLE_COPY_BYTES = 5 * 1024 ** 3;

/** The error a stream reports when it was stopped by the other side, not by its own failure. */
function isAbort(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'ABORT_ERR';
}

/**
 * Blobs as objects in one bucket: `<prefix><tenant>/<sha256>`, staged under `<prefix>staging/`.
 * S3 has no rename, so `commit` is a server-side copy then a delete of the staged object; the
 * copy is atomic (readers see the whole object or none), which is what the port asks for.
 * Every instance shares the bucket, so nothing here keeps state between calls.
 */
export class S3BlobStore implements BlobStore {
  readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly staleStagingMs: number;
  private readonly partSize: number;
  private readonly landings: LandingArea;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? '';
    this.staleStagingMs = options.staleStagingMs ?? 6 * 60 * 60 * 1000;
    this.partSize = Math.max(5 * 1024 * 1024, options.partSizeBytes ?? 8 * 1024 * 1024);
    this.client = new S3Client({
      region: options.region ?? 'us-east-1',
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.forcePathStyle === undefined ? {} : { forcePathStyle: options.forcePathStyle }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      // The SDK's default adds CRC32 checksums that many S3-compatible servers reject or ignore;
      // we hash every byte ourselves (SHA-256) anyway.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A server that stops answering fails the call (503 to the client) instead of holding it:
      // 5 s to connect, 30 s of silence on an open request.
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
    });
    this.landings = new LandingArea(this.client, this.bucket, this.prefix);
  }

  private objectKey(key: string): string {
    if (!KEY.test(key)) throw new Error(`invalid blob key: ${JSON.stringify(key).slice(0, 100)}`);
    return this.prefix + key;
  }

  private stagingKey(id: string): string {
    if (!STAGING_ID.test(id)) throw new Error('invalid staging id');
    return `${this.prefix}staging/${id}`;
  }

  async init(): Promise<void> {
    await this.ensureBucket();
    await this.removeStaleStaging();
  }

  /** Creates the bucket when it does not exist (handy for tests and MinIO; production buckets usually exist). */
  private async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket })).catch((createErr: unknown) => {
        // Another instance created it in between.
        if (!['BucketAlreadyOwnedByYou', 'BucketAlreadyExists'].includes(errorName(createErr))) throw createErr;
      });
    }
  }

  /**
   * Staged objects of uploads that died with their process. Only old ones: other instances
   * share the bucket and may be staging right now. A bucket lifecycle rule that aborts
   * incomplete multipart uploads (docs/deploy.md) covers what a crash leaves mid-upload; this
   * also tries, where the server supports listing them.
   */
  private async removeStaleStaging(): Promise<void> {
    const cutoff = Date.now() - this.staleStagingMs;
    const Prefix = `${this.prefix}staging/`;
    await deleteOlderThan(this.client, this.bucket, Prefix, cutoff);
    try {
      const uploads = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix }));
      for (const u of uploads.Uploads ?? []) {
        if (u.Key && u.UploadId && u.Initiated && u.Initiated.getTime() < cutoff) {
          await this.client
            .send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId }))
            .catch(() => {});
        }
      }
    } catch {
      // Not every S3-compatible server lists multipart uploads; the lifecycle rule still applies.
    }
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    const stagingId = randomBytes(16).toString('hex');
    const Key = this.stagingKey(stagingId);
    const counter = new HashCounter(maxBytes);
    // Bounded memory: at most queueSize parts of partSize bytes are buffered, whatever the size.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: counter },
      partSize: this.partSize,
      queueSize: 2,
      leavePartsOnError: false,
    });
    // Each side stops the other. A failed source (or the size limit) destroys `counter`, whose
    // reader inside Upload then fails, and Upload aborts the multipart upload before `done()`
    // settles (Upload.abort() would settle at once and abort in the background). A failed
    // upload destroys the pipe, so the source is not left paused forever.
    const piping = pipeline(source, counter);
    const uploading = upload.done();
    uploading.catch((err: unknown) => counter.destroy(err instanceof Error ? err : new Error(String(err))));
    const [piped, uploaded] = await Promise.allSettled([piping, uploading]);
    // The digest can fail only if the hashing worker died; the staged object goes too then.
    const [hashed] = piped.status === 'fulfilled' ? await Promise.allSettled([counter.digest()]) : [piped];
    if (hashed.status === 'rejected' || uploaded.status === 'rejected') {
      source.destroy();
      // A small body may have gone up as one PutObject before the failure was seen.
      await this.deleteObject(Key).catch(() => {});
      // The stream's own error (file_too_large, client disconnect) explains more than the abort it
      // caused; but when S3 failed first, the stream only saw an AbortError, and S3's error (an
      // unreachable server: 503) is the cause.
      if (uploaded.status === 'rejected' && (hashed.status === 'fulfilled' || isAbort(hashed.reason)))
        throw uploaded.reason;
      throw hashed.status === 'rejected' ? hashed.reason : (uploaded as PromiseRejectedResult).reason;
    }
    return { stagingId, sizeBytes: counter.bytes, sha256: hashed.value };
  }

  async commit(staged: StagedBlob, key: string): Promise<void> {
    const target = this.objectKey(key);
    // Same content address = same bytes: keep what is there, never copy over it (s3rver, for one,
    // deletes the target before copying). The core commits a key as its one writer, so nothing
    // copies to it between this look and the copy.
    const needed = !(await this.exists(target));
    if (needed && staged.sizeBytes > MAX_SINGLE_COPY_BYTES) {
      throw new Error(`S3BlobStore cannot commit ${staged.sizeBytes} bytes: one CopyObject copies at most 5 GiB.`);
    }
    // Landed bytes stay where they landed until the core drops them (dropLanded).
    if (isLanded(staged)) {
      if (needed) await this.landings.copyTo(staged, target);
      return;
    }
    const from = this.stagingKey(staged.stagingId);
    if (needed) {
      await this.client.send(
        new CopyObjectCommand({ Bucket: this.bucket, Key: target, CopySource: copySource(this.bucket, from) }),
      );
    }
    await this.deleteObject(from);
  }

  async discard(staged: StagedBlob): Promise<void> {
    if (isLanded(staged)) return;
    await this.deleteObject(this.stagingKey(staged.stagingId));
  }

  async stat(key: string): Promise<{ sizeBytes: number } | null> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return { sizeBytes: head.ContentLength ?? 0 };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const result = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    // In Node the SDK's body is an http.IncomingMessage (a Readable) with helper mixins.
    const body = result.Body as Readable;
    if (!range) return body;
    // A server may answer a range with more than was asked (HTTP lets it ignore Range and send
    // everything; s3rver reads `bytes=0-0` as `bytes=0-`): cut out exactly the inclusive range.
    const sent = parseContentRange(result.ContentRange) ?? { start: 0, end: Number.POSITIVE_INFINITY };
    if (sent.start === range.start && sent.end === range.end) return body;
    if (sent.start > range.start || sent.end < range.end) {
      body.destroy();
      throw new Error(`Storage answered bytes ${sent.start}-${sent.end} for a request of ${range.start}-${range.end}.`);
    }
    return Readable.from(slice(body, range.start - sent.start, range.end - range.start + 1), { objectMode: false });
  }

  async delete(key: string): Promise<void> {
    await this.deleteObject(this.objectKey(key));
  }

  /**
   * A time-limited URL that S3 itself answers with the bytes, as an attachment named `filename`
   * and typed `contentType`: downloads need not stream through Cairn.
   */
  async presignGet(key: string, filename: string, contentType: string, expiresInSeconds: number): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: this.objectKey(key),
      ResponseContentDisposition: attachmentDisposition(filename),
      ResponseContentType: contentType,
    });
    return getSignedUrl(this.client, command, { expiresIn: expiresInSeconds });
  }

  /** A presigned PUT straight to the bucket, so large uploads never pass through Cairn. */
  presignUpload(
    landingKey: string,
    sizeBytes: number,
    expiresInSeconds: number,
  ): Promise<{ url: string; headers: Record<string, string> }> {
    return this.landings.presignPut(landingKey, sizeBytes, expiresInSeconds);
  }

  /**
   * Hashes what a client PUT to `landingKey`, reading it once (bytes from the client are never
   * trusted unread); `commit` then has S3 copy it, and the landing object stays for a retry.
   */
  stageLanded(landingKey: string, maxBytes: number, landed?: LandResult): Promise<StagedBlob | null> {
    return this.landings.hash(landingKey, maxBytes, landed);
  }

  land(landingKey: string, source: Readable, maxBytes: number): Promise<LandResult> {
    return this.landings.land(landingKey, source, maxBytes, this.partSize);
  }

  readLanded(landingKey: string): Promise<Readable> {
    return this.landings.read(landingKey);
  }

  dropLanded(landingKey: string): Promise<void> {
    return this.landings.drop(landingKey);
  }

  sweepLandings(landedBefore: number): Promise<number> {
    return this.landings.sweep(landedBefore);
  }

  async ping(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }

  private async exists(objectKey: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  private deleteObject(objectKey: string): Promise<void> {
    return deleteQuietly(this.client, this.bucket, objectKey);
  }
}

/** `bytes <start>-<end>/<total>` → the inclusive range sent. */
function parseContentRange(header: string | undefined): { start: number; end: number } | null {
  const m = header ? /^bytes (\d+)-(\d+)\//.exec(header) : null;
  return m ? { start: Number(m[1]), end: Number(m[2]) } : null;
}

/** `length` bytes of `source` after skipping `skip`; stops (and so destroys the source) once they are out. */
async function* slice(source: Readable, skip: number, length: number): AsyncGenerator<Buffer> {
  let toSkip = skip;
  let left = length;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    let part = chunk;
    if (toSkip > 0) {
      const dropped = Math.min(toSkip, part.length);
      part = part.subarray(dropped);
      toSkip -= dropped;
    }
    if (part.length === 0) continue;
    if (part.length >= left) {
      yield part.subarray(0, left);
      return;
    }
    left -= part.length;
    yield part;
  }
}
