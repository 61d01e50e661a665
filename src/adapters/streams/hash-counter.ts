import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { CairnError } from '../../core/errors.js';
import { OffThreadSha256 } from './off-thread-sha256.js';

/**
 * A stream longer than this is hashed on a worker thread (OffThreadSha256); a shorter one on the
 * event loop once it has ended, where a few kilobytes cost less than a message to a worker.
 */
export const OFF_THREAD_AFTER_BYTES = 1024 * 1024;

/**
 * Hashes (SHA-256) and counts bytes on their way to a blob store, failing as soon as the limit is
 * passed, so an oversized upload is cut off mid-stream rather than after it has been stored.
 * Shared by every blob store adapter.
 *
 * Until more than OFF_THREAD_AFTER_BYTES have passed, the chunks are only kept (not copied); past
 * that they and the rest go to a worker thread. Chunks are passed on untouched either way. The
 * kept chunks are read again later, so a source must not reuse its buffers (no upload source
 * does: the HTTP parser, busboy and the S3 SDK hand over new buffers).
 */
export class HashCounter extends Transform {
  private held: Buffer[] = [];
  private offThread: OffThreadSha256 | null = null;
  private result: Promise<string> | null = null;
  bytes = 0;

  constructor(
    private readonly maxBytes: number,
    highWaterMark?: number,
  ) {
    super(highWaterMark === undefined ? {} : { highWaterMark });
  }

  /** Whether the hash is being computed on a worker thread (the stream passed OFF_THREAD_AFTER_BYTES). */
  get hashedOffThread(): boolean {
    return this.offThread !== null;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      done(new CairnError('file_too_large', `Content is larger than the limit of ${this.maxBytes} bytes.`));
      return;
    }
    if (this.offThread) {
      this.offThread.update(chunk).then(() => done(null, chunk), done);
      return;
    }
    // Until the hash moves to a worker, `held` is everything so far: `bytes` is its size.
    this.held.push(chunk);
    if (this.bytes <= OFF_THREAD_AFTER_BYTES) {
      done(null, chunk);
      return;
    }
    let offThread: OffThreadSha256;
    try {
      offThread = new OffThreadSha256();
    } catch (err) {
      // No thread or slot memory to be had (a process out of memory): this upload fails, and
      // the process does not (a throw here would be an uncaught exception).
      done(err as Error);
      return;
    }
    this.offThread = offThread;
    const held = this.held;
    this.held = [];
    (async () => {
      for (const c of held) await offThread.update(c);
    })().then(() => done(null, chunk), done);
  }

  /**
   * The digest is asked for as soon as the last chunk has passed, so a worker never holds a
   * stream that has ended, whether or not anyone reads the digest (a store whose upload fails
   * after the bytes have passed never does).
   */
  override _flush(done: TransformCallback): void {
    if (this.offThread) {
      this.result = this.offThread.digest();
      // Read (and rethrown) by digest(); a stream whose digest nobody asks for must not crash the process.
      this.result.catch(() => {});
    } else {
      const hash = createHash('sha256');
      for (const c of this.held) hash.update(c);
      this.held = [];
      this.result = Promise.resolve(hash.digest('hex'));
    }
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // Destroyed before its end (a failed or abandoned upload): the worker may forget the hash.
    if (!this.result) this.offThread?.abort();
    this.held = [];
    done(err);
  }

  /** Lowercase hex SHA-256 of everything that passed; once the stream has ended. */
  digest(): Promise<string> {
    if (!this.result) return Promise.reject(new Error('HashCounter.digest() before the stream ended'));
    return this.result;
  }
}
