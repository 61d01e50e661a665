import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableFileSink, remainder } from '../../src/adapters/fs-blobs/durable-file-sink.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cairn-sink-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('DurableFileSink', () => {
  it('writes many small chunks (vectored) and large ones in order, syncing along the way', async () => {
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

describe('remainder (after a short vectored write)', () => {
  const bufs = [Buffer.from('abc'), Buffer.from('de'), Buffer.from('fghi')];
  const text = (b: Buffer[]) => Buffer.concat(b).toString();
  it.each([
    [0, 'abcdefghi'],
    [2, 'cdefghi'],
    [3, 'defghi'],
    [4, 'efghi'],
    [5, 'fghi'],
    [8, 'i'],
  ])('after %i bytes leaves %s', (written, left) => {
    expect(text(remainder(bufs, written))).toBe(left);
  });
});
