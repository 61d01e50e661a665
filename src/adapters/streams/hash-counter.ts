import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { CairnError } from '../../core/errors.js';

/**
 * Hashes (SHA-256) and counts bytes on their way to a blob store, failing as soon as the limit is
 * passed, so an oversized upload is cut off mid-stream rather than after it has been stored.
 * Shared by every blob store adapter.
 */
export class HashCounter extends Transform {
  private readonly hash = createHash('sha256');
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
      done(new CairnError('file_too_large', `Content is larger than the limit of ${this.maxBytes} bytes.`));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** Lowercase hex SHA-256 of everything that passed; call once, after the stream ended. */
  digest(): string {
    return this.hash.digest('hex');
  }
}
