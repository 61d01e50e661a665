import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { PassThrough, type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CopyObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { LandResult, StagedBlob } from '../../ports/blob-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import { limitText } from '../../shared/upload-limits.js';
import { HashCounter } from '../blob-common/hash-counter.js';
import { feedLanding } from '../blob-common/land-stream.js';
import { checkLandingKey } from '../blob-common/landing-key.js';
import { copySource, deleteOlderThan, deleteQuietly, errorName, isNotFound } from './s3-objects.js';

/**
 * Bytes of a presigned upload, hashed where they landed: no staging copy exists, `commit`
 * copies straight from the landing object, and only if it is still the object that was hashed.
 */
export interface LandedBlob extends StagedBlob {
  readonly landed: { objectKey: string; etag: string | undefined };
}

/** The copy condition's name in Ceph RGW's S3 API (see LandingArea.copyTo). */
const RGW_COPY_IF_MATCH = 'x-amz-copy-if-match';

export const isLanded = (staged: StagedBlob): staged is LandedBlob => 'landed' in staged;

/**
 * The `uploads/` area of the bucket, where clients PUT large files straight to S3 and the pieces
 * of resumable uploads wait for their last one. Completing an
 * upload reads the landed object once (to hash and count it) and then has S3 copy it to its
 * content address: Cairn never re-uploads the bytes, which for 5 GiB would triple the I/O of one
 * request. The landing object is kept until the artifact is active, so a `complete` that failed
 * half-way can simply be retried; the sweeper removes what abandoned uploads leave.
 */
export class LandingArea {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
  ) {}

  objectKey(landingKey: string): string {
    return this.prefix + checkLandingKey(landingKey);
  }

  /**
   * Streams a piece of a resumable upload to its object (multipart for large ones, bounded
   * memory). A source that fails part-way ends the object with what arrived, which is kept.
   */
  async land(landingKey: string, source: Readable, maxBytes: number, partSize: number): Promise<LandResult> {
    const Key = this.objectKey(landingKey);
    const body = new PassThrough({ highWaterMark: 1024 * 1024 });
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: body },
      partSize,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const uploading = upload.done();
    // Seen here, never unhandled: a failure also ends the wait for 'drain' below.
    uploading.catch(() => {});
    try {
      const landed = await feedLanding(source, maxBytes, async (chunk) => {
        if (!body.write(chunk)) await Promise.race([once(body, 'drain'), uploading]);
      });
      body.end();
      await uploading;
      return landed;
    } catch (err) {
      body.destroy(err instanceof Error ? err : new Error(String(err)));
      await uploading.catch(() => {});
      await deleteQuietly(this.client, this.bucket, Key).catch(() => {});
      throw err;
    }
  }

  async read(landingKey: string): Promise<Readable> {
    const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(landingKey) }));
    return got.Body as Readable;
  }

  /** A presigned PUT of exactly `sizeBytes`: the length is signed, so S3 refuses any other. */
  async presignPut(
    landingKey: string,
    sizeBytes: number,
    expiresInSeconds: number,
  ): Promise<{ url: string; headers: Record<string, string> }> {
    const command = new PutObjectCommand({
      Bucket: this.bucket,
      Key: this.objectKey(landingKey),
      ContentLength: sizeBytes,
    });
    const url = await getSignedUrl(this.client, command, {
      expiresIn: expiresInSeconds,
      signableHeaders: new Set(['content-length']),
    });
    return { url, headers: { 'Content-Length': String(sizeBytes) } };
  }

  /**
   * Reads the landed object once, hashing and counting it; null when nothing has landed. When
   * this process landed it (`landed`), its size and hash are known: only its ETag is asked for.
   */
  async hash(landingKey: string, maxBytes: number, landed?: LandResult): Promise<LandedBlob | null> {
    const objectKey = this.objectKey(landingKey);
    if (landed) return this.known(objectKey, maxBytes, landed);
    let body: Readable;
    let etag: string | undefined;
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      body = got.Body as Readable;
      etag = got.ETag;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    const counter = new HashCounter(maxBytes);
    const discard = new Writable({ write: (_chunk, _enc, done) => done() });
    try {
      await pipeline(body, counter, discard);
    } finally {
      body.destroy();
    }
    return {
      stagingId: randomBytes(16).toString('hex'),
      sizeBytes: counter.bytes,
      sha256: await counter.digest(),
      landed: { objectKey, etag },
    };
  }

  private async known(objectKey: string, maxBytes: number, landed: LandResult): Promise<LandedBlob | null> {
    let head: { ContentLength?: number | undefined; ETag?: string | undefined };
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: objectKey }));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    if (head.ContentLength !== landed.sizeBytes) return null;
    if (landed.sizeBytes > maxBytes) {
      throw new CairnError('file_too_large', `Content is larger than the limit of ${limitText(maxBytes)}.`);
    }
    return {
      stagingId: randomBytes(16).toString('hex'),
      sizeBytes: landed.sizeBytes,
      sha256: landed.sha256,
      landed: { objectKey, etag: head.ETag },
    };
  }

  /**
   * Server-side copy of the landed bytes to `targetObjectKey`. The copy is conditional on the
   * ETag that was hashed: a client that PUTs other bytes in between (its URL is still valid)
   * makes it fail rather than store bytes under the wrong content address. The condition goes
   * under both names services read it by: S3's `x-amz-copy-source-if-match`, and
   * `x-amz-copy-if-match`, the only one Ceph RGW honours (tested on 16.2: it ignores S3's). No
   * other service defines RGW's name, and S3 ignores `x-amz-` headers it does not know. (Servers
   * that ignore both, like s3rver, copy anyway.)
   */
  async copyTo(landed: LandedBlob, targetObjectKey: string): Promise<void> {
    const { etag } = landed.landed;
    const command = new CopyObjectCommand({
      Bucket: this.bucket,
      Key: targetObjectKey,
      CopySource: copySource(this.bucket, landed.landed.objectKey),
      ...(etag ? { CopySourceIfMatch: etag } : {}),
    });
    if (etag) {
      command.middlewareStack.add(
        (next) => async (args) => {
          // The HTTP request being built, before it is signed (so the header is signed too).
          const request = args.request as { headers?: Record<string, string> };
          if (request.headers) request.headers[RGW_COPY_IF_MATCH] = etag;
          return next(args);
        },
        { step: 'build', name: 'rgwCopyIfMatch' },
      );
    }
    try {
      await this.client.send(command);
    } catch (err) {
      if (errorName(err) === 'PreconditionFailed') {
        throw new Error('The uploaded object changed while it was being completed; complete it again.');
      }
      throw err;
    }
  }

  async drop(landingKey: string): Promise<void> {
    await deleteQuietly(this.client, this.bucket, this.objectKey(landingKey));
  }

  /** Deletes landed objects last written before `landedBefore` (ms); returns how many. */
  sweep(landedBefore: number): Promise<number> {
    return deleteOlderThan(this.client, this.bucket, `${this.prefix}uploads/`, landedBefore);
  }
}
