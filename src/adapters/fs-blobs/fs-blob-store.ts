import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange, StagedBlob } from '../../ports/blob-store.js';
import { HashCounter } from '../streams/hash-counter.js';
import { DurableFileSink } from './durable-file-sink.js';

const KEY = /^([A-Za-z0-9_]{1,64})\/([0-9a-f]{64})$/;
const CHUNK = 1024 * 1024;
/** How often a staged upload asks the disk to write back what it has so far (see DurableFileSink). */
const SYNC_EVERY = 32 * CHUNK;
/** The largest of the sink's two write buffers (so at most 8 MiB per upload in flight). */
const WRITE_BUFFER = 4 * CHUNK;

/**
 * Blobs as files under a root folder: `<root>/<tenant>/<2 hex>/<sha256>`, staged in
 * `<root>/.staging` on the same filesystem so that making them visible is one atomic rename.
 */
export class FsBlobStore implements BlobStore {
  private readonly root: string;
  private readonly staging: string;

  constructor(opts: { root: string }) {
    this.root = path.resolve(opts.root);
    this.staging = path.join(this.root, '.staging');
  }

  async init(): Promise<void> {
    await mkdir(this.staging, { recursive: true });
    // Anything still staged belongs to an upload that died with a previous process.
    for (const name of await readdir(this.staging)) await rm(path.join(this.staging, name), { force: true });
  }

  /** The only way from a key to a path: keys that do not match the shape never touch the disk. */
  private pathOf(key: string): string {
    const m = KEY.exec(key);
    if (!m) throw new Error(`invalid blob key: ${JSON.stringify(key).slice(0, 100)}`);
    const [, tenant = '', hash = ''] = m;
    return path.join(this.root, tenant, hash.slice(0, 2), hash);
  }

  private stagingPath(id: string): string {
    if (!/^[A-Za-z0-9_-]{8,64}$/.test(id)) throw new Error('invalid staging id');
    return path.join(this.staging, id);
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    const stagingId = randomBytes(16).toString('hex');
    const file = this.stagingPath(stagingId);
    const counter = new HashCounter(maxBytes);
    let handle: FileHandle | undefined;
    try {
      handle = await open(file, 'wx');
      await pipeline(source, counter, new DurableFileSink(handle, SYNC_EVERY, WRITE_BUFFER));
      await handle.close();
      return { stagingId, sizeBytes: counter.bytes, sha256: counter.digest() };
    } catch (err) {
      await handle?.close().catch(() => {});
      await rm(file, { force: true });
      source.destroy();
      throw err;
    }
  }

  /**
   * One rename, then the folder's fsync so the new name survives a crash. The same bytes already
   * stored under the key are simply replaced by identical ones (readers keep the file they have
   * open), which costs less than asking first. The folder is created only when the rename says
   * it is missing: after a tenant's first uploads it always exists.
   */
  async commit(staged: StagedBlob, key: string): Promise<void> {
    const target = this.pathOf(key);
    const from = this.stagingPath(staged.stagingId);
    try {
      await rename(from, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mkdir(path.dirname(target), { recursive: true });
      await rename(from, target);
    }
    await fsyncDir(path.dirname(target));
  }

  async discard(staged: StagedBlob): Promise<void> {
    // A staged blob is one file: unlink it (after a commit it is gone, which is fine).
    await unlink(this.stagingPath(staged.stagingId)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  async stat(key: string): Promise<{ sizeBytes: number } | null> {
    try {
      return { sizeBytes: (await stat(this.pathOf(key))).size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    // Opening first turns a missing file into a rejection here rather than a stream error later.
    const handle = await open(this.pathOf(key), 'r');
    return createReadStream('', {
      fd: handle,
      highWaterMark: CHUNK,
      ...(range ? { start: range.start, end: range.end } : {}),
    });
  }

  async delete(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  async close(): Promise<void> {}
}

async function fsyncDir(dir: string): Promise<void> {
  const h = await open(dir, 'r');
  try {
    await h.sync();
  } finally {
    await h.close();
  }
}
