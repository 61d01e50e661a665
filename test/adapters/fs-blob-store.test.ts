import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/adapters/fs-blobs/fs-blob-store.js';
import { blobStoreContract } from '../contract/blob-store.contract.js';

async function tempRoot() {
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-blobs-'));
  return { root: path.join(dir, 'blobs'), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

blobStoreContract('local folder', async () => {
  const { root, cleanup } = await tempRoot();
  return { store: new FsBlobStore({ root }), cleanup };
});

describe('FsBlobStore specifics', () => {
  it('empties .staging at init: leftovers of a crash never survive a start', async () => {
    const { root, cleanup } = await tempRoot();
    const store = new FsBlobStore({ root });
    await store.init();
    await writeFile(path.join(root, '.staging', 'half-written'), 'partial');
    await new FsBlobStore({ root }).init();
    expect(await readdir(path.join(root, '.staging'))).toEqual([]);
    await cleanup();
  });

  it('refuses keys that could name a path outside the root', async () => {
    const { root, cleanup } = await tempRoot();
    const store = new FsBlobStore({ root });
    await store.init();
    const hash = 'a'.repeat(64);
    for (const key of [
      `../${hash}`,
      `/etc/${hash}`,
      `t/../../${hash}`,
      't/passwd',
      `t\\x/${hash}`,
      `${hash}`,
      `t/${hash.toUpperCase()}`,
    ]) {
      await expect(store.read(key)).rejects.toThrow(/invalid blob key/);
      await expect(store.delete(key)).rejects.toThrow(/invalid blob key/);
    }
    await cleanup();
  });

  it('leaves nothing in .staging when the source is destroyed half-way (a client disconnect)', async () => {
    const { root, cleanup } = await tempRoot();
    const store = new FsBlobStore({ root });
    await store.init();
    const source = new Readable({ read() {} });
    const staging = store.stage(source, 10_000_000);
    source.push(Buffer.alloc(4096));
    setTimeout(() => source.destroy(new Error('aborted')), 20);
    await expect(staging).rejects.toThrow();
    expect(await readdir(path.join(root, '.staging'))).toEqual([]);
    await cleanup();
  });
});
