import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BufferShelf } from '../../src/adapters/fs-blobs/buffer-shelf.js';
import { DurableFileSink } from '../../src/adapters/fs-blobs/durable-file-sink.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cairn-sink-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('DurableFileSink', () => {
  it('writes many small chunks and large ones in order, through its growing buffers, syncing along the way', async () => {
    const chunks = Array.from({ length: 3000 }, (_, i) => randomBytes(1 + ((i * 7919) % 70_000)));
    const file = path.join(dir, 'out');
    const handle = await open(file, 'wx');
    // Write-back every 1 MiB: dozens of datasyncs interleave with the writes.
    await pipeline(Readable.from(chunks), new DurableFileSink(handle, 1024 * 1024, 1024 * 1024));
    await handle.close();
    expect((await readFile(file)).equals(Buffer.concat(chunks))).toBe(true);
  });

  it('fails the stream when a write-back fails, even if the final fsync would succeed', async () => {
    const file = path.join(dir, 'out');
    const real = await open(file, 'wx');
    // The real handle, with its write-back failing as a full or broken disk would make it fail.
    const failing = Object.create(real, {
      datasync: { value: () => Promise.reject(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })) },
    });
    const chunks = Array.from({ length: 64 }, () => randomBytes(64 * 1024));
    await expect(pipeline(Readable.from(chunks), new DurableFileSink(failing, 256 * 1024, 64 * 1024))).rejects.toThrow(
      'EIO',
    );
    await real.close();
  });
});

describe('DurableFileSink writes', () => {
  it('continues a short write where it stopped, and fails the stream when a write fails', async () => {
    const chunks = Array.from({ length: 200 }, (_, i) => randomBytes(1 + ((i * 104_729) % 90_000)));
    const file = path.join(dir, 'short');
    const real = await open(file, 'wx');
    // At most 1000 bytes per write, as a signal or a nearly full disk can make it.
    const short = Object.create(real, {
      write: {
        value: (b: Buffer, off: number, len: number, pos: number) => real.write(b, off, Math.min(len, 1000), pos),
      },
    });
    await pipeline(Readable.from(chunks), new DurableFileSink(short, 256 * 1024, 512 * 1024));
    await real.close();
    expect((await readFile(file)).equals(Buffer.concat(chunks))).toBe(true);

    const broken = await open(path.join(dir, 'broken'), 'wx');
    const failing = Object.create(broken, {
      write: { value: () => Promise.reject(Object.assign(new Error('ENOSPC: no space left'), { code: 'ENOSPC' })) },
    });
    await expect(pipeline(Readable.from(chunks), new DurableFileSink(failing, 256 * 1024, 512 * 1024))).rejects.toThrow(
      'ENOSPC',
    );
    await broken.close();
  });
});

/** A shelf that notes when it makes a buffer and when one comes back. */
class WatchedShelf extends BufferShelf {
  made = 0;
  constructor(
    size: number,
    private readonly events: string[] = [],
  ) {
    super(size, 4);
  }
  override take(): Buffer {
    if (this.count === 0) this.made++;
    return super.take();
  }
  override give(buffer: Buffer): void {
    this.events.push('give');
    super.give(buffer);
  }
}

describe('DurableFileSink with a buffer shelf', () => {
  const MIB = 1024 * 1024;

  it('uploads one after another reuse the same full-size buffers, and each file is intact', async () => {
    const shelf = new WatchedShelf(MIB);
    for (const name of ['first', 'second', 'third']) {
      const chunks = Array.from({ length: 150 }, (_, i) => randomBytes(1 + ((i * 7919) % 70_000)));
      const handle = await open(path.join(dir, name), 'wx');
      await pipeline(Readable.from(chunks), new DurableFileSink(handle, 4 * MIB, MIB, shelf));
      await handle.close();
      expect((await readFile(path.join(dir, name))).equals(Buffer.concat(chunks))).toBe(true);
    }
    // Two full-size buffers for the first upload, none after: the point of the shelf.
    expect(shelf.made).toBe(2);
    expect(shelf.count).toBe(2);
  });

  it('a sink destroyed while writing gives its buffers back only after the write, and starts no other', async () => {
    const events: string[] = [];
    const shelf = new WatchedShelf(MIB, events);
    const file = path.join(dir, 'aborted');
    const real = await open(file, 'wx');
    const slow = Object.create(real, {
      write: {
        value: async (b: Buffer, off: number, len: number, pos: number) => {
          events.push('write');
          await sleep(20);
          const r = await real.write(b, off, len, pos);
          events.push('written');
          return r;
        },
      },
    });
    // 6 MiB arrive at once, then the client goes away while the sink is still writing.
    let sent = 0;
    const source = new Readable({
      read() {
        if (sent >= 6 * MIB) {
          this.destroy(new Error('client went away'));
          return;
        }
        sent += 64 * 1024;
        this.push(randomBytes(64 * 1024));
      },
    });
    const sink = new DurableFileSink(slow, 64 * MIB, MIB, shelf);
    const closed = new Promise((resolve) => sink.once('close', resolve));
    await expect(pipeline(source, sink)).rejects.toThrow('client went away');
    await closed;
    await real.close();
    const firstGive = events.indexOf('give');
    expect(firstGive).toBeGreaterThan(-1);
    expect(events.slice(firstGive)).not.toContain('write');
    expect(events.lastIndexOf('written')).toBeLessThan(firstGive);
    expect(events.filter((e) => e === 'write').length).toBe(events.filter((e) => e === 'written').length);

    // The shelf's buffers serve the next upload, which gets exactly its own bytes.
    const chunks = Array.from({ length: 100 }, () => randomBytes(50_000));
    const next = await open(path.join(dir, 'next'), 'wx');
    await pipeline(Readable.from(chunks), new DurableFileSink(next, 4 * MIB, MIB, shelf));
    await next.close();
    expect((await readFile(path.join(dir, 'next'))).equals(Buffer.concat(chunks))).toBe(true);
  });
});
