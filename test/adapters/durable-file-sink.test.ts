import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
