import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer, text } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FsBlobStore, SMALL_BLOB_BYTES, SMALL_BLOBS_FILE } from '../../src/adapters/fs-blobs/fs-blob-store.js';
import { blobStoreContract } from '../contract/blob-store.contract.js';
import { eventually } from '../helpers/e2e.js';
import { filesUnder, localBlobNames } from '../helpers/server.js';
import { crashedStagingFolder } from '../helpers/staging.js';

async function tempRoot() {
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-blobs-'));
  return { root: path.join(dir, 'blobs'), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

blobStoreContract('local folder', async () => {
  const { root, cleanup } = await tempRoot();
  const store = new FsBlobStore({ root });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await cleanup();
    },
    leaveStaleStaging: async () => {
      await crashedStagingFolder(path.join(root, '.staging'));
    },
  };
}, ['sweepStaging']);

describe('FsBlobStore specifics', () => {
  it('init keeps what another running store is staging and removes what a stopped process left', async () => {
    const { root, cleanup } = await tempRoot();
    const running = new FsBlobStore({ root });
    await running.init();
    const source = new Readable({ read() {} });
    const staging = running.stage(source, 10_000_000);
    const first = randomBytes(SMALL_BLOB_BYTES + 4096);
    source.push(first);
    await eventually(async () => (await filesUnder(path.join(root, '.staging'))).length === 1, 5000, 'a staged file');
    // A process of this host that has exited (a crash) left its folder behind.
    const crashed = await crashedStagingFolder(path.join(root, '.staging'));

    // Another store opens the same folder: an admin command, or a second server.
    const other = new FsBlobStore({ root });
    await other.init();
    expect(existsSync(crashed)).toBe(false);
    const last = randomBytes(1000);
    source.push(last);
    source.push(null);
    const staged = await staging;
    const whole = Buffer.concat([first, last]);
    expect(staged.sha256).toBe(createHash('sha256').update(whole).digest('hex'));
    await running.commit(staged, `t/${staged.sha256}`);
    expect(await buffer(await running.read(`t/${staged.sha256}`))).toEqual(whole);
    await other.close();
    await running.close();
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
      await expect(store.stat(key)).rejects.toThrow(/invalid blob key/);
      // A small blob (kept in SQLite, not as a file) is refused under such a key too.
      const staged = await store.stage(Readable.from([Buffer.from('small')]), 100);
      await expect(store.commit(staged, key)).rejects.toThrow(/invalid blob key/);
      await store.discard(staged);
    }
    expect(await localBlobNames(root)).toEqual([]);
    await store.close();
    await cleanup();
  });

  it.each([
    ['still held in memory', 4096],
    ['already spilled to a staging file', SMALL_BLOB_BYTES + 4096],
  ])('leaves nothing behind when the source is destroyed half-way (a client disconnect), %s', async (_, sent) => {
    const { root, cleanup } = await tempRoot();
    const store = new FsBlobStore({ root });
    await store.init();
    const source = new Readable({ read() {} });
    const staging = store.stage(source, 10_000_000);
    source.push(Buffer.alloc(sent));
    const spilled = sent > SMALL_BLOB_BYTES ? 1 : 0;
    await eventually(async () => (await filesUnder(path.join(root, '.staging'))).length === spilled, 5000, 'staging');
    source.destroy(new Error('aborted'));
    await expect(staging).rejects.toThrow();
    expect(await filesUnder(path.join(root, '.staging'))).toEqual([]);
    expect(await localBlobNames(root)).toEqual([]);
    await store.close();
    await cleanup();
  });
});

describe('FsBlobStore, a client that disconnects while its staging file is being created', () => {
  it('leaves no file behind, at whichever moment of the creation the disconnect lands', async () => {
    const { root, cleanup } = await tempRoot();
    const store = new FsBlobStore({ root });
    await store.init();
    // The disconnect comes 0, 1, 2… turns of the event loop after the bytes that make the upload
    // spill to a file: one of those turns lands while the file is being opened.
    for (let turns = 0; turns < 12; turns++) {
      const source = new Readable({ read() {} });
      const staging = store.stage(source, 10_000_000);
      source.push(Buffer.alloc(SMALL_BLOB_BYTES + 4096));
      for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
      source.destroy(new Error('aborted'));
      await expect(staging).rejects.toThrow();
      expect(await filesUnder(path.join(root, '.staging')), `after ${turns} turns`).toEqual([]);
    }
    await store.close();
    await cleanup();
  });
});

describe('FsBlobStore small blobs', () => {
  let root: string;
  let cleanup: () => Promise<void>;
  let store: FsBlobStore;
  beforeEach(async () => {
    ({ root, cleanup } = await tempRoot());
    store = new FsBlobStore({ root });
    await store.init();
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
  const bytesOf = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) % 256));
  async function put(s: FsBlobStore, data: Buffer, chunk = 1000): Promise<string> {
    const parts = Array.from({ length: Math.ceil(data.length / chunk) }, (_, i) =>
      data.subarray(i * chunk, (i + 1) * chunk),
    );
    const staged = await s.stage(Readable.from(parts), data.length);
    const key = `t1/${staged.sha256}`;
    await s.commit(staged, key);
    return key;
  }
  const fileOf = (key: string) => {
    const hash = key.split('/')[1]!;
    return path.join(root, 't1', hash.slice(0, 2), hash);
  };

  it('keeps a blob of up to 64 KiB in SQLite and one byte more as a file, both read back whole and in ranges', async () => {
    const small = bytesOf(SMALL_BLOB_BYTES);
    const large = bytesOf(SMALL_BLOB_BYTES + 1);
    const smallKey = await put(store, small);
    const largeKey = await put(store, large);
    expect(existsSync(fileOf(smallKey))).toBe(false);
    expect(existsSync(fileOf(largeKey))).toBe(true);
    for (const [key, data] of [
      [smallKey, small],
      [largeKey, large],
    ] as const) {
      expect(await store.stat(key)).toEqual({ sizeBytes: data.length });
      expect(sha(await buffer(await store.read(key)))).toBe(sha(data));
      expect(await buffer(await store.read(key, { start: 1000, end: 1009 }))).toEqual(data.subarray(1000, 1010));
    }
    expect(await filesUnder(path.join(root, '.staging'))).toEqual([]);
  });

  it('commits the small blobs of one turn with one fdatasync of the WAL, and each is committed once resolved', async () => {
    const staged = await Promise.all(
      Array.from({ length: 30 }, (_, i) => store.stage(Readable.from([Buffer.from(`blob ${i}`)]), 100)),
    );
    const handle = await open(path.join(root, SMALL_BLOBS_FILE), 'r');
    const datasync = vi.spyOn(Object.getPrototypeOf(handle) as { datasync(): Promise<void> }, 'datasync');
    await handle.close();
    try {
      await Promise.all(staged.map((s) => store.commit(s, `t1/${s.sha256}`)));
      expect(datasync).toHaveBeenCalledTimes(1);
    } finally {
      datasync.mockRestore();
    }
    // Committed: another connection (another process on the same folder) reads them.
    const other = new FsBlobStore({ root });
    await other.init();
    for (const s of staged) expect(await other.stat(`t1/${s.sha256}`)).toEqual({ sizeBytes: s.sizeBytes });
    await other.close();
  });

  it('keeps small blobs across a restart, and shares them with a second store on the same folder', async () => {
    const data = Buffer.from('kept across restarts');
    const key = await put(store, data);
    const second = new FsBlobStore({ root });
    await second.init();
    expect(await text(await second.read(key))).toBe('kept across restarts');
    await second.delete(key);
    expect(await store.stat(key)).toBeNull();
    await second.close();
    await store.close();
    store = new FsBlobStore({ root });
    await store.init();
    const again = await put(store, data);
    expect(await text(await store.read(again))).toBe('kept across restarts');
  });

  it('closing lets the small commits and deletes already asked for finish, so none is lost or fails', async () => {
    const kept = await put(store, Buffer.from('to delete'));
    const staged = await store.stage(Readable.from([Buffer.from('committed during close')]), 100);
    // Both still queued for their group commit (it runs a turn later) when close starts.
    const commit = store.commit(staged, `t1/${staged.sha256}`);
    const removal = store.delete(kept);
    await store.close();
    await expect(commit).resolves.toBeUndefined();
    await expect(removal).resolves.toBeUndefined();
    store = new FsBlobStore({ root });
    await store.init();
    expect(await text(await store.read(`t1/${staged.sha256}`))).toBe('committed during close');
    expect(await store.stat(kept)).toBeNull();
  });

  it('deletes a key from both places: a file written before small blobs moved into SQLite, and its row', async () => {
    const data = Buffer.from('stored twice');
    const key = await put(store, data);
    await mkdir(path.dirname(fileOf(key)), { recursive: true });
    await writeFile(fileOf(key), data);
    await store.delete(key);
    expect(existsSync(fileOf(key))).toBe(false);
    expect(await store.stat(key)).toBeNull();
    await expect(store.read(key)).rejects.toThrow();
  });

  it('keeps the stored file when the same bytes are committed again, and drops the redundant copy', async () => {
    const data = bytesOf(SMALL_BLOB_BYTES * 3);
    const key = await put(store, data);
    const stored = await stat(fileOf(key));
    // Twice, the second with discard right after its commit, as every upload path does.
    for (let i = 0; i < 2; i++) {
      const staged = await store.stage(Readable.from([data]), data.length);
      await store.commit(staged, key);
      if (i === 1) await store.discard(staged);
    }
    // The same file, not a copy renamed over it (which would free the old file's blocks first).
    const after = await stat(fileOf(key));
    expect([after.ino, after.mtimeMs]).toEqual([stored.ino, stored.mtimeMs]);
    expect(sha(await buffer(await store.read(key)))).toBe(sha(data));
    // The copies go in the background; close() waits for them.
    await store.close();
    expect(await filesUnder(path.join(root, '.staging'))).toEqual([]);
  });

  it('drops a small upload that is discarded instead of committed', async () => {
    const staged = await store.stage(Readable.from([Buffer.from('never kept')]), 100);
    await store.discard(staged);
    await store.discard(staged);
    await expect(store.commit(staged, `t1/${staged.sha256}`)).rejects.toThrow();
    expect(await localBlobNames(root)).toEqual([]);
  });
});
