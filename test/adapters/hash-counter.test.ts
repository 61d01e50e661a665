import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { HashCounter, OFF_THREAD_AFTER_BYTES } from '../../src/adapters/streams/hash-counter.js';
import { OffThreadSha256, openOffThreadHashes, stopHashWorkers } from '../../src/adapters/streams/off-thread-sha256.js';

const MIB = 1024 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** `bytes` of random data in chunks of `size` (the last one shorter). */
function chunked(bytes: number, size: number): Buffer[] {
  const all = randomBytes(bytes);
  const out: Buffer[] = [];
  for (let at = 0; at < bytes; at += size) out.push(all.subarray(at, Math.min(bytes, at + size)));
  return out;
}

/** Pipes `chunks` through a counter into a collector; the counter and what came out. */
async function run(chunks: Buffer[], maxBytes = Number.MAX_SAFE_INTEGER) {
  const counter = new HashCounter(maxBytes);
  const out: Buffer[] = [];
  const collect = new Writable({
    write(chunk: Buffer, _enc, done) {
      out.push(chunk);
      done();
    },
  });
  await pipeline(Readable.from(chunks), counter, collect);
  return { counter, out: Buffer.concat(out) };
}

describe('HashCounter', () => {
  it('hashes a stream up to the threshold on the event loop, and passes it on unchanged', async () => {
    const chunks = chunked(OFF_THREAD_AFTER_BYTES, 65_536);
    const { counter, out } = await run(chunks);
    const all = Buffer.concat(chunks);
    expect(counter.hashedOffThread).toBe(false);
    expect(counter.bytes).toBe(all.length);
    expect(await counter.digest()).toBe(sha256(all));
    expect(out.equals(all)).toBe(true);
  });

  it('hashes a longer stream on a worker, in order, whatever the chunk sizes', async () => {
    // One byte over the threshold, then uneven chunks around the worker's 1 MiB slots.
    for (const [bytes, size] of [
      [OFF_THREAD_AFTER_BYTES + 1, 65_536],
      [5 * MIB + 123, 65_537],
      [3 * MIB, 3 * MIB],
      [2 * MIB + 7, 999],
    ] as const) {
      const chunks = chunked(bytes, size);
      const { counter, out } = await run(chunks);
      const all = Buffer.concat(chunks);
      expect(counter.hashedOffThread).toBe(true);
      expect(counter.bytes).toBe(bytes);
      expect(await counter.digest()).toBe(sha256(all));
      expect(out.equals(all)).toBe(true);
    }
    expect(openOffThreadHashes()).toBe(0);
  });

  it('hashes several streams at once, each into its own digest', async () => {
    const inputs = [chunked(4 * MIB, 65_536), chunked(3 * MIB + 5, 10_000), chunked(6 * MIB, 1_000_000)];
    const results = await Promise.all(inputs.map((chunks) => run(chunks)));
    for (const [i, { counter }] of results.entries()) {
      expect(await counter.digest()).toBe(sha256(Buffer.concat(inputs[i] as Buffer[])));
    }
    expect(openOffThreadHashes()).toBe(0);
  });

  it('refuses bytes past the limit mid-stream, and the worker forgets the stream', async () => {
    const chunks = chunked(4 * MIB, 65_536);
    await expect(run(chunks, 3 * MIB)).rejects.toMatchObject({ code: 'file_too_large' });
    await vi.waitFor(() => expect(openOffThreadHashes()).toBe(0));
  });

  it('forgets a stream whose source fails after the hash moved to a worker', async () => {
    async function* failing() {
      yield* chunked(2 * MIB, 65_536);
      throw new Error('client went away');
    }
    const counter = new HashCounter(Number.MAX_SAFE_INTEGER);
    const sink = new Writable({ write: (_c, _e, done) => done() });
    await expect(pipeline(Readable.from(failing()), counter, sink)).rejects.toThrow('client went away');
    expect(counter.hashedOffThread).toBe(true);
    await vi.waitFor(() => expect(openOffThreadHashes()).toBe(0));
    await expect(counter.digest()).rejects.toThrow('before the stream ended');
  });

  it('a process waiting only for a worker digest stays alive until it arrives', async () => {
    // Built code in a child (`npm test` builds before vitest). The second stream meets a worker
    // that has started and gone idle: with nothing else to do, Node would exit with the digest
    // on its way (code 13, an unsettled top-level await) if the worker did not hold it open.
    const script = `
      import { HashCounter } from ${JSON.stringify(path.resolve('dist/adapters/streams/hash-counter.js'))};
      import { Readable, Writable } from 'node:stream';
      import { pipeline } from 'node:stream/promises';
      async function hash(bytes) {
        const counter = new HashCounter(1e12);
        await pipeline(Readable.from([Buffer.alloc(bytes, 7)]), counter, new Writable({ write: (c, e, d) => d() }));
        return [counter.hashedOffThread, await counter.digest()].join(' ');
      }
      await hash(3 * 1024 * 1024);
      await new Promise((resolve) => setTimeout(resolve, 100));
      console.log(await hash(32 * 1024 * 1024));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script]);
    expect(stdout.trim()).toBe(`true ${sha256(Buffer.alloc(32 * MIB, 7))}`);
  });
});

describe('OffThreadSha256', () => {
  it('takes a chunk larger than all its slots, waiting for slots to come back', async () => {
    const big = randomBytes(11 * MIB + 3);
    const hash = new OffThreadSha256();
    await hash.update(big);
    await hash.update(big.subarray(0, 10));
    expect(await hash.digest()).toBe(sha256(Buffer.concat([big, big.subarray(0, 10)])));
  });

  it('stops an update waiting for slots when the stream is aborted, and other streams go on', async () => {
    const other = new OffThreadSha256();
    const otherBytes = randomBytes(2 * MIB);
    await other.update(otherBytes);
    const victim = new OffThreadSha256();
    // More than its four slots: the update is still waiting for one when the abort comes.
    const updating = victim.update(randomBytes(11 * MIB));
    victim.abort();
    await expect(updating).rejects.toThrow('aborted');
    await other.update(otherBytes);
    expect(await other.digest()).toBe(sha256(Buffer.concat([otherBytes, otherBytes])));
    await vi.waitFor(() => expect(openOffThreadHashes()).toBe(0));
  });

  it('reuses the slots of ended and aborted streams for the next ones, whole', async () => {
    // Slots travel to the worker and back; the sets of these streams are kept for the next.
    const aborted = new OffThreadSha256();
    const updating = aborted.update(randomBytes(9 * MIB));
    aborted.abort();
    await expect(updating).rejects.toThrow('aborted');
    const ended = new OffThreadSha256();
    await ended.update(randomBytes(5 * MIB));
    await ended.digest();
    await vi.waitFor(() => expect(openOffThreadHashes()).toBe(0));
    // Each of these fills every slot of its set several times over.
    for (let round = 0; round < 3; round++) {
      const bytes = [randomBytes(6 * MIB + 5), randomBytes(7 * MIB + 1)];
      const hashes = bytes.map(() => new OffThreadSha256());
      await Promise.all(hashes.map((h, i) => h.update(bytes[i]!)));
      expect(await Promise.all(hashes.map((h) => h.digest()))).toEqual(bytes.map(sha256));
    }
  });

  it('fails the streams of a worker that stops, and the next stream gets a new worker', async () => {
    const hash = new OffThreadSha256();
    await hash.update(randomBytes(2 * MIB));
    await stopHashWorkers();
    await expect(hash.digest()).rejects.toThrow(/hashing worker exited/);
    await expect(hash.update(Buffer.alloc(1))).rejects.toThrow(/hashing worker exited/);
    expect(openOffThreadHashes()).toBe(0);

    const next = new OffThreadSha256();
    await next.update(Buffer.from('still hashing'));
    expect(await next.digest()).toBe(sha256(Buffer.from('still hashing')));
  });
});
