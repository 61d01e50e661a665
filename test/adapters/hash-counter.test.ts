import { createHash, randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { HashCounter } from '../../src/adapters/blob-common/hash-counter.js';

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
  it('hashes and counts a stream, whatever the chunk sizes, and passes it on unchanged', async () => {
    for (const [bytes, size] of [
      [0, 1],
      [1, 1],
      [MIB + 1, 65_536],
      [3 * MIB, 3 * MIB],
      [2 * MIB + 7, 999],
    ] as const) {
      const chunks = chunked(bytes, size);
      const { counter, out } = await run(chunks);
      const all = Buffer.concat(chunks);
      expect(counter.bytes).toBe(bytes);
      expect(await counter.digest()).toBe(sha256(all));
      expect(out.equals(all)).toBe(true);
    }
  });

  it('hashes several streams at once, each into its own digest', async () => {
    const inputs = [chunked(4 * MIB, 65_536), chunked(3 * MIB + 5, 10_000), chunked(6 * MIB, 1_000_000)];
    const results = await Promise.all(inputs.map((chunks) => run(chunks)));
    for (const [i, { counter }] of results.entries()) {
      expect(await counter.digest()).toBe(sha256(Buffer.concat(inputs[i] as Buffer[])));
    }
  });

  it('refuses bytes past the limit mid-stream, before they are passed on', async () => {
    const chunks = chunked(4 * MIB, 65_536);
    await expect(run(chunks, 3 * MIB)).rejects.toMatchObject({ code: 'file_too_large' });
    await expect(run(chunked(3 * MIB, 65_536), 3 * MIB)).resolves.toBeDefined();
  });

  it('has no digest for a stream whose source failed', async () => {
    async function* failing() {
      yield* chunked(2 * MIB, 65_536);
      throw new Error('client went away');
    }
    const counter = new HashCounter(Number.MAX_SAFE_INTEGER);
    const sink = new Writable({ write: (_c, _e, done) => done() });
    await expect(pipeline(Readable.from(failing()), counter, sink)).rejects.toThrow('client went away');
    await expect(counter.digest()).rejects.toThrow('before the stream ended');
  });
});
