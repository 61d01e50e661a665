import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep, setImmediate as tick } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BufferShelf } from '../../src/adapters/fs-blobs/buffer-shelf.js';
import { READ_CHUNK_BYTES, RecyclingFileStream } from '../../src/adapters/fs-blobs/recycling-file-stream.js';

const MIB = 1024 * 1024;

/**
 * A target that, like a socket, is done with a chunk only when it calls back, and copies the chunk
 * at that moment: a buffer the stream read into again before the callback shows up here as wrong
 * bytes. Records which memory each chunk came from.
 */
class LateSink extends Writable {
  readonly copies: Buffer[] = [];
  readonly memory = new Set<ArrayBufferLike>();
  constructor(
    highWaterMark: number,
    private readonly ticks: number,
    /** Finish no chunk before this many bytes wait in the sink (or two seconds have passed). */
    private holdUntil = 0,
  ) {
    super({ highWaterMark });
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, callback: (err?: Error | null) => void): void {
    this.memory.add(chunk.buffer);
    void (async () => {
      for (let i = 0; i < this.ticks; i++) await tick();
      for (const started = Date.now(); this.writableLength < this.holdUntil && Date.now() - started < 2000; )
        await tick();
      this.holdUntil = 0;
      this.copies.push(Buffer.from(chunk));
      callback();
    })();
  }
}

/** A temporary file holding `data` for the tests of the describe block that calls this. */
function tempFile(data: Buffer): () => string {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cairn-recycle-'));
    await writeFile(path.join(dir, 'blob'), data);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  return () => path.join(dir, 'blob');
}

describe('RecyclingFileStream', () => {
  // Not a whole number of chunks, so the last read is short.
  const data = randomBytes(9 * MIB + 12_345);
  const file = tempFile(data);

  async function send(sink: LateSink, start = 0, end = data.length) {
    const handle = await open(file(), 'r');
    await pipeline(new RecyclingFileStream(handle, start, end, sink), sink);
    return handle;
  }

  it('sends every byte intact into a target that flushes late, reusing a few buffers', async () => {
    const sink = new LateSink(16 * 1024, 3);
    const handle = await send(sink);
    expect(Buffer.concat(sink.copies).equals(data)).toBe(true);
    // Ten chunks from at most four buffers: the point of the stream.
    expect(sink.memory.size).toBeLessThanOrEqual(4);
    expect(handle.fd).toBe(-1);
  });

  it('never reuses a buffer the target still holds, even when it holds many chunks', async () => {
    // A high-water mark of 8 MiB lets the pipe hand over eight chunks, and the sink finishes none
    // until six of them wait in it.
    const sink = new LateSink(8 * MIB, 0, 6 * MIB);
    await send(sink);
    expect(Buffer.concat(sink.copies).equals(data)).toBe(true);
    expect(sink.memory.size).toBeGreaterThanOrEqual(7);
  });

  it('sends exactly a range, from a chunk boundary or not', async () => {
    for (const [start, end] of [
      [0, 1],
      [MIB - 1, 2 * MIB + 1],
      [3 * MIB, 3 * MIB + 1000],
      [5 * MIB + 7, data.length],
    ] as const) {
      const sink = new LateSink(16 * 1024, 1);
      await send(sink, start, end);
      expect(Buffer.concat(sink.copies).equals(data.subarray(start, end))).toBe(true);
    }
  });

  it('fails, and closes the file, when the file is shorter than the bytes promised', async () => {
    const handle = await open(file(), 'r');
    const sink = new LateSink(16 * 1024, 0);
    await expect(pipeline(new RecyclingFileStream(handle, 0, data.length + 10, sink), sink)).rejects.toThrow(
      /ended 10 bytes early/,
    );
    expect(handle.fd).toBe(-1);
  });

  it('closes the file when destroyed half-way (a client that went away)', async () => {
    const handle = await open(file(), 'r');
    const stream = new RecyclingFileStream(handle, 0, data.length, { writableLength: 0, once: () => undefined });
    await new Promise<void>((resolve) => stream.once('data', () => resolve()));
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    expect(handle.fd).toBe(-1);
  });
});

describe('RecyclingFileStream with a buffer shelf', () => {
  const data = randomBytes(6 * MIB + 99);
  const file = tempFile(data);

  /** A shelf that notes each buffer it makes and each it gets back. */
  class WatchedShelf extends BufferShelf {
    made = 0;
    readonly given: Buffer[] = [];
    constructor() {
      super(READ_CHUNK_BYTES, 16);
    }
    override take(): Buffer {
      if (this.count === 0) this.made++;
      return super.take();
    }
    override give(buffer: Buffer): void {
      this.given.push(buffer);
      super.give(buffer);
    }
  }

  it('streams one after another reuse the buffers the last one gave back when its target closed', async () => {
    const shelf = new WatchedShelf();
    const madeAfter: number[] = [];
    for (let i = 0; i < 3; i++) {
      const sink = new LateSink(16 * 1024, 2);
      const closed = new Promise((resolve) => sink.once('close', resolve));
      await pipeline(new RecyclingFileStream(await open(file(), 'r'), 0, data.length, sink, shelf), sink);
      await closed;
      await tick();
      expect(Buffer.concat(sink.copies).equals(data)).toBe(true);
      madeAfter.push(shelf.made);
    }
    expect(madeAfter[0]).toBeGreaterThan(0);
    expect(madeAfter[2]).toBe(madeAfter[0]);
  });

  it('a stream that has ended gives nothing back while its target still holds its last chunks', async () => {
    const shelf = new WatchedShelf();
    // The first target takes everything at once (8 MiB high-water mark) and finishes each chunk
    // late; the next stream starts as soon as the first has read its file.
    const slow = new LateSink(8 * MIB, 30);
    const first = new RecyclingFileStream(await open(file(), 'r'), 0, data.length, slow, shelf);
    const ended = new Promise((resolve) => first.once('end', resolve));
    const slowDone = pipeline(first, slow);
    await ended;
    const fast = new LateSink(16 * 1024, 0);
    await pipeline(new RecyclingFileStream(await open(file(), 'r'), 0, data.length, fast, shelf), fast);
    await slowDone;
    expect(Buffer.concat(fast.copies).equals(data)).toBe(true);
    expect(Buffer.concat(slow.copies).equals(data)).toBe(true);
  });

  it('a target that closes during a read gets no buffer back before that read is done', async () => {
    const shelf = new WatchedShelf();
    const events: { what: 'read' | 'done' | 'give'; buf: Buffer }[] = [];
    const count = (what: string) => events.filter((e) => e.what === what).length;
    // The client goes away while the third chunk is being read.
    let goAway = () => {};
    const real = await open(file(), 'r');
    const slow = Object.create(real, {
      read: {
        value: async (buf: Buffer, off: number, len: number, pos: number) => {
          events.push({ what: 'read', buf });
          if (count('read') === 3) setImmediate(goAway);
          try {
            await sleep(15);
            return await real.read(buf, off, len, pos);
          } finally {
            // Done or failed (the stream closes the file when destroyed): either way it is over.
            events.push({ what: 'done', buf });
          }
        },
      },
      close: { value: () => real.close() },
    });
    const origGive = shelf.give.bind(shelf);
    shelf.give = (buf: Buffer) => {
      events.push({ what: 'give', buf });
      origGive(buf);
    };
    const sink = new LateSink(16 * 1024, 0);
    const stream = new RecyclingFileStream(slow, 0, data.length, sink, shelf);
    const closed = new Promise((resolve) => sink.once('close', resolve));
    goAway = () => {
      sink.destroy();
      stream.destroy();
    };
    stream.pipe(sink);
    await closed;
    await sleep(50);
    const gives = events.filter((e) => e.what === 'give');
    expect(gives.length).toBeGreaterThan(0);
    for (const give of gives) {
      const at = events.indexOf(give);
      // Every read into a buffer has finished before the buffer is given back, and none starts after.
      const reads = events.filter((e) => e.buf === give.buf && e.what !== 'give');
      expect(reads.filter((e) => e.what === 'read').length).toBe(reads.filter((e) => e.what === 'done').length);
      expect(reads.every((e) => events.indexOf(e) < at)).toBe(true);
    }
  });
});
