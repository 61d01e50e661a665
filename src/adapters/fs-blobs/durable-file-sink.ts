import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';

/**
 * A write stream to a new file that is durable when it finishes (`fsync`ed before 'finish').
 *
 * Why not `createWriteStream` + one `fsync` at the end: on a machine with plenty of RAM the
 * kernel keeps the whole upload as dirty pages and starts writing them back only at that final
 * `fsync`, so the upload first runs at memory speed and then stalls for the whole disk write.
 * Asking for write-back every `syncEveryBytes` (one `fdatasync` in flight at a time, never
 * waited for by the writes) lets the disk work while the bytes are still arriving, and leaves
 * only the tail for the final `fsync`.
 */
export class DurableFileSink extends Writable {
  private position = 0;
  private unsynced = 0;
  private syncing: Promise<void> | null = null;
  /** A failed write-back fails the upload: after an fsync error Linux may drop the dirty pages. */
  private syncError: Error | null = null;

  constructor(
    private readonly handle: FileHandle,
    private readonly syncEveryBytes: number,
    highWaterMark: number,
  ) {
    super({ highWaterMark });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.writeAll(chunk).then(() => done(), done);
  }

  override _writev(chunks: { chunk: Buffer }[], done: (err?: Error | null) => void): void {
    // Many small chunks (a multipart parser hands over ~64 KB at a time) as one vectored write,
    // without copying them into one buffer first.
    this.writeAll(chunks.map((c) => c.chunk)).then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    (async () => {
      await this.syncing;
      if (this.syncError) throw this.syncError;
      await this.handle.sync();
    })().then(() => done(), done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // A write-back still in flight must end before the caller closes (and the OS reuses) the fd.
    Promise.resolve(this.syncing)
      .catch(() => {})
      .then(() => done(err));
  }

  private async writeAll(data: Buffer | Buffer[]): Promise<void> {
    if (this.syncError) throw this.syncError;
    let buffers = Array.isArray(data) ? data : [data];
    const total = buffers.reduce((n, b) => n + b.length, 0);
    for (let left = total; left > 0; ) {
      const { bytesWritten } = await this.handle.writev(buffers, this.position);
      this.position += bytesWritten;
      left -= bytesWritten;
      if (left > 0) buffers = remainder(buffers, bytesWritten);
    }
    this.unsynced += total;
    if (this.unsynced >= this.syncEveryBytes && this.syncing === null) {
      this.unsynced = 0;
      const s = this.handle
        .datasync()
        .catch((err: Error) => {
          this.syncError ??= err;
        })
        .finally(() => {
          if (this.syncing === s) this.syncing = null;
        });
      this.syncing = s;
    }
  }
}

/** What is left of `buffers` after the first `written` bytes (a short write). */
export function remainder(buffers: Buffer[], written: number): Buffer[] {
  const out: Buffer[] = [];
  let skip = written;
  for (const b of buffers) {
    if (skip >= b.length) {
      skip -= b.length;
      continue;
    }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}
