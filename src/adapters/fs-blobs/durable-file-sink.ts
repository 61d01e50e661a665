import type { FileHandle } from 'node:fs/promises';
import { Writable } from 'node:stream';
import type { BufferShelf } from './buffer-shelf.js';

/** The first buffer's size: a small upload never allocates more than this. */
const FIRST_BUFFER = 16 * 1024;

/**
 * A write stream to a new file that is durable when it finishes (`fsync`ed before 'finish').
 *
 * Why not `createWriteStream` + one `fsync` at the end: on a machine with plenty of RAM the
 * kernel keeps the whole upload as dirty pages and starts writing them back only at that final
 * `fsync`, so the upload first runs at memory speed and then stalls for the whole disk write.
 * Asking for write-back every `syncEveryBytes` (one `fdatasync` in flight at a time, never
 * waited for by the writes) lets the disk work while the bytes are still arriving, and leaves
 * only the tail for the final `fsync`.
 *
 * Why copy: the socket hands over ~64 KB buffers. Keeping them until a vectored write of many
 * had finished let them outlive two minor collections, so V8 moved them to the old generation,
 * and a 1 GiB upload set off a full mark-compact every ~100 ms (about a third of the server's
 * time). Each chunk is copied into one of two buffers this sink owns and dies young; one buffer
 * fills while the other is written. The buffers start at 16 KiB and double per write up to
 * `bufferBytes`, so a small upload costs one small allocation. Buffers of the full size come from
 * `shelf` when one is given and go back to it once no write uses them (see BufferShelf); with one
 * waiting there, the sink starts at full size.
 */
export class DurableFileSink extends Writable {
  private filling: Buffer;
  private spare: Buffer | null = null;
  private filled = 0;
  private position = 0;
  private unsynced = 0;
  private writing: Promise<void> | null = null;
  private syncing: Promise<void> | null = null;
  /** A failed write or write-back fails the upload: after an fsync error Linux may drop dirty pages. */
  private failure: Error | null = null;
  /** Set once the buffers have gone back to the shelf: nothing may touch them after that. */
  private released = false;

  constructor(
    private readonly handle: FileHandle,
    private readonly syncEveryBytes: number,
    private readonly bufferBytes: number,
    private readonly shelf?: BufferShelf,
  ) {
    // A small queue in front: while a write is awaited, backpressure leaves the bytes in the
    // socket rather than queued here as chunks (which would live long enough to be promoted).
    super({ highWaterMark: FIRST_BUFFER });
    // A buffer waiting on the shelf costs nothing: start at full size rather than allocate the
    // growing ones, which a large upload would otherwise leave behind in the old generation.
    this.filling =
      shelf && shelf.count > 0 && shelf.size === bufferBytes
        ? shelf.take()
        : Buffer.allocUnsafeSlow(Math.min(FIRST_BUFFER, bufferBytes));
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.take(chunk).then(() => done(), done);
  }

  override _final(done: (err?: Error | null) => void): void {
    (async () => {
      if (this.filled > 0) await this.flush();
      await this.writing;
      this.release();
      await this.syncing;
      if (this.failure) throw this.failure;
      await this.handle.sync();
    })().then(() => done(), done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // A write or write-back still in flight must end before the caller closes (and the OS
    // reuses) the fd, and before the buffers go back to the shelf. `destroyed` is already set, so
    // a flush waiting for the current write starts no other (see flush).
    Promise.all([this.writing, this.syncing])
      .catch(() => {})
      .then(() => {
        this.release();
        done(err);
      });
  }

  private async take(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    for (let at = 0; at < chunk.length; ) {
      if (this.released) throw new Error('The file sink is closed.');
      const copied = chunk.copy(this.filling, this.filled, at);
      this.filled += copied;
      at += copied;
      if (this.filled === this.filling.length) await this.flush();
    }
  }

  /** Starts writing the filled buffer (after the previous write ends) and switches to the other. */
  private async flush(): Promise<void> {
    await this.writing;
    if (this.failure) throw this.failure;
    // Destroyed while waiting: _destroy is about to hand the buffers back, so start nothing.
    if (this.destroyed || this.released) throw new Error('The file sink is closed.');
    const buffer = this.filling;
    const length = this.filled;
    const at = this.position;
    this.position += length;
    this.writing = this.writeAll(buffer, length, at).catch((err: Error) => {
      this.failure ??= err;
    });
    const next = Math.min(buffer.length * 2, this.bufferBytes);
    this.filling = this.spare && this.spare.length === next ? this.spare : this.allocate(next);
    this.spare = buffer.length === next ? buffer : null;
    this.filled = 0;
  }

  private allocate(size: number): Buffer {
    return this.shelf && size === this.shelf.size ? this.shelf.take() : Buffer.allocUnsafeSlow(size);
  }

  /** Hands the buffers to the shelf; called once no write can use them any more. */
  private release(): void {
    if (this.released) return;
    this.released = true;
    if (this.shelf) {
      this.shelf.give(this.filling);
      if (this.spare) this.shelf.give(this.spare);
    }
    this.filling = Buffer.alloc(0);
    this.spare = null;
  }

  private async writeAll(buffer: Buffer, length: number, at: number): Promise<void> {
    for (let off = 0; off < length; ) {
      const { bytesWritten } = await this.handle.write(buffer, off, length - off, at + off);
      off += bytesWritten;
    }
    this.unsynced += length;
    if (this.unsynced >= this.syncEveryBytes && this.syncing === null) {
      this.unsynced = 0;
      const s = this.handle
        .datasync()
        .catch((err: Error) => {
          this.failure ??= err;
        })
        .finally(() => {
          if (this.syncing === s) this.syncing = null;
        });
      this.syncing = s;
    }
  }
}
