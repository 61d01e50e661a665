import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { CairnError } from '../../shared/cairn-error.js';
import { limitText } from '../../shared/upload-limits.js';

/**
 * Hashes (SHA-256) and counts bytes on their way to a blob store, failing as soon as the limit is
 * passed, so an oversized upload is cut off mid-stream rather than after it has been stored.
 * Shared by every blob store adapter. Chunks are passed on untouched.
 */
export class HashCounter extends Transform {
  private readonly hash = createHash('sha256');
  private result: string | null = null;
  bytes = 0;

  constructor(
    private readonly maxBytes: number,
    highWaterMark?: number,
  ) {
    super(highWaterMark === undefined ? {} : { highWaterMark });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      done(new CairnError('file_too_large', `Content is larger than the limit of ${limitText(this.maxBytes)}.`));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.result = this.hash.digest('hex');
    done();
  }

  /** Lowercase hex SHA-256 of everything that passed; once the stream has ended. */
  digest(): Promise<string> {
    if (this.result === null) return Promise.reject(new Error('HashCounter.digest() before the stream ended'));
    return Promise.resolve(this.result);
  }
}
