import type { FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { PipeTarget } from '../../ports/blob-store.js';
import type { BufferShelf } from './buffer-shelf.js';

/** Bytes read per chunk, as the store's other file streams; the size of a shelf's buffers. */
export const READ_CHUNK_BYTES = 1024 * 1024;
/**
 * Buffers kept for reuse. Piped into a response, at most three are out at once: one the socket is
 * writing, one read ahead and waiting in this stream, one being read. A fourth covers a target that
 * flushes late; past that a chunk gets a buffer of its own, so nothing ever waits for one.
 */
const KEPT = 4;

interface Slot {
  readonly buf: Buffer;
  /** Bytes emitted by the stream once this slot's chunk has gone out: free when that many are flushed. */
  releasedAt: number;
}

/**
 * Streams bytes `[start, end)` of an open file into one writable it is piped straight into (an
 * HTTP response), reading into a few buffers it reuses.
 *
 * Why: `fs.createReadStream` allocates a fresh buffer per chunk. glibc serves a 1 MiB allocation
 * with `mmap` until a free of one raises its threshold, and then the kernel zero-fills and faults in
 * every page of every chunk: in such a process a loopback download of 1 GiB took 66,000 page
 * faults and 1.4–1.5 s of CPU instead of about 1,300 and 0.5 s (docs/benchmarks.md, round 6).
 *
 * When a buffer is free again: a pipe writes each chunk to its target as the chunk is emitted, in
 * order, and the target's `writableLength` counts the bytes written to it that it still holds
 * (for a response: buffered in it, or handed to the socket and not yet written). So the bytes this
 * stream has emitted minus the target's `writableLength` have left the process, and a buffer whose
 * chunk ended at or before that mark can be read into again. This holds only if the stream is
 * piped into `target` and nothing else reads it: a transform in between would hold chunks the
 * target does not count.
 *
 * With a `shelf`, the kept buffers of full chunk size come from it and go back to it once the
 * target has closed (it holds none of them then) and no read into them is in flight, so that a
 * process serving many large downloads does not leave 4 MiB per download for a full collection
 * (see BufferShelf).
 */
export class RecyclingFileStream extends Readable {
  private position: number;
  /** Bytes pushed so far (those still in this stream's buffer have not been emitted yet). */
  private pushed = 0;
  private readonly slots: Slot[] = [];
  private readonly chunkSize: number;
  /** The read in flight, if any: it writes into a slot's buffer on another thread. */
  private reading: Promise<unknown> = Promise.resolve();
  /** Set once the slots have gone back to the shelf: new chunks get buffers of their own. */
  private shelved = false;

  constructor(
    private readonly handle: FileHandle,
    start: number,
    private readonly end: number,
    private readonly target: PipeTarget,
    private readonly shelf?: BufferShelf,
  ) {
    super({ highWaterMark: READ_CHUNK_BYTES });
    this.position = start;
    this.chunkSize = Math.max(1, Math.min(READ_CHUNK_BYTES, end - start));
    if (shelf) target.once('close', () => this.shelve(shelf));
  }

  override _read(): void {
    const want = Math.min(this.chunkSize, this.end - this.position);
    if (want <= 0) {
      this.push(null);
      return;
    }
    const slot = this.takeSlot();
    const read = this.handle.read(slot.buf, 0, want, this.position);
    this.reading = read.catch(() => {});
    read.then(
      ({ bytesRead }) => {
        if (this.destroyed) return;
        // Stored blobs never change, so a short file is damage: fail rather than send less than
        // the Content-Length that was promised.
        if (bytesRead === 0) {
          this.destroy(new Error(`The stored file ended ${this.end - this.position} bytes early.`));
          return;
        }
        this.position += bytesRead;
        this.pushed += bytesRead;
        slot.releasedAt = this.pushed;
        this.push(bytesRead === slot.buf.length ? slot.buf : slot.buf.subarray(0, bytesRead));
      },
      (err: Error) => this.destroy(err),
    );
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.handle.close().then(
      () => callback(err),
      (closeErr: Error) => callback(err ?? closeErr),
    );
  }

  /** A buffer no byte of which is still on its way out, or a new one. */
  private takeSlot(): Slot {
    const flushed = this.pushed - this.readableLength - this.target.writableLength;
    let slot = this.slots.find((s) => s.releasedAt <= flushed);
    if (!slot) {
      const keep = this.slots.length < KEPT && !this.shelved;
      const fromShelf = keep && this.shelf?.size === this.chunkSize;
      slot = { buf: fromShelf ? this.shelf!.take() : Buffer.allocUnsafeSlow(this.chunkSize), releasedAt: 0 };
      if (keep) this.slots.push(slot);
    }
    slot.releasedAt = Number.POSITIVE_INFINITY;
    return slot;
  }

  /** The target has closed: once the read in flight (if any) is done, no one uses the slots. */
  private shelve(shelf: BufferShelf): void {
    this.shelved = true;
    const slots = this.slots.splice(0);
    void this.reading.then(() => {
      for (const slot of slots) shelf.give(slot.buf);
    });
  }
}
