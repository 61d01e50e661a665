import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setImmediate as tick } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecyclingFileStream } from '../../src/adapters/fs-blobs/recycling-file-stream.js';

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

describe('RecyclingFileStream', () => {
  let dir: string;
  let file: string;
  // Not a whole number of chunks, so the last read is short.
  const data = randomBytes(9 * MIB + 12_345);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'cairn-recycle-'));
    file = path.join(dir, 'blob');
    await writeFile(file, data);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function send(sink: LateSink, start = 0, end = data.length) {
    const handle = await open(file, 'r');
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
    const handle = await open(file, 'r');
    const sink = new LateSink(16 * 1024, 0);
    await expect(pipeline(new RecyclingFileStream(handle, 0, data.length + 10, sink), sink)).rejects.toThrow(
      /ended 10 bytes early/,
    );
    expect(handle.fd).toBe(-1);
  });

  it('closes the file when destroyed half-way (a client that went away)', async () => {
    const handle = await open(file, 'r');
    const stream = new RecyclingFileStream(handle, 0, data.length, { writableLength: 0 });
    await new Promise<void>((resolve) => stream.once('data', () => resolve()));
    stream.destroy();
    await new Promise((resolve) => stream.once('close', resolve));
    expect(handle.fd).toBe(-1);
  });
});
