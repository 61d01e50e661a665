import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { access, type FileHandle, mkdir, open, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, ByteRange, LandResult, StagedBlob } from '../../ports/blob-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import { HashCounter } from '../blob-common/hash-counter.js';
import { BufferShelf } from './buffer-shelf.js';
import { DurableFileSink } from './durable-file-sink.js';
import { fsyncDir } from './fsync-dir.js';
import { LandingArea } from './landing-area.js';
import { SmallBlobs } from './small-blobs.js';
import { StagingArea, type StagingAreaOptions } from './staging-area.js';

const KEY = /^([A-Za-z0-9_]{1,64})\/([0-9a-f]{64})$/;
const CHUNK = 1024 * 1024;
/** How often a staged upload asks the disk to write back what it has so far (see DurableFileSink). */
const SYNC_EVERY = 32 * CHUNK;
/** The largest of the sink's two write buffers (so at most 8 MiB per upload in flight). */
const WRITE_BUFFER = 4 * CHUNK;
/** Full-size write buffers kept between uploads: enough for two large uploads at once. */
const KEPT_WRITE_BUFFERS = 4;
/** Blobs up to this size are kept in `small-blobs.sqlite` (see SmallBlobs) rather than as files. */
export const SMALL_BLOB_BYTES = 64 * 1024;
/** The file of SmallBlobs, in the root (its name cannot be a tenant's folder). */
export const SMALL_BLOBS_FILE = 'small-blobs.sqlite';

/**
 * Blobs under a root folder: small ones (up to SMALL_BLOB_BYTES) in one SQLite file,
 * `<root>/small-blobs.sqlite`, the others as files `<root>/<tenant>/<2 hex>/<sha256>`, staged in
 * `<root>/.staging` on the same filesystem so that making them visible is one atomic rename (each
 * process in a folder of its own there: see StagingArea).
 * A small upload is staged in memory until it outgrows the limit; then what arrived so far and
 * the rest go to a staging file.
 */
export class FsBlobStore implements BlobStore {
  private readonly root: string;
  private readonly staging: StagingArea;
  private small: SmallBlobs | null = null;
  /** Small uploads staged in memory, by staging id, until committed or discarded. */
  private readonly held = new Map<string, Buffer>();
  /** Redundant staged files being removed after their commit (see commit), by staging id. */
  private readonly dropping = new Map<string, Promise<void>>();
  private readonly writeBuffers = new BufferShelf(WRITE_BUFFER, KEPT_WRITE_BUFFERS);
  private readonly landings: LandingArea;

  constructor(opts: { root: string; staging?: StagingAreaOptions }) {
    this.root = path.resolve(opts.root);
    this.staging = new StagingArea(path.join(this.root, '.staging'), opts.staging);
    this.landings = new LandingArea(
      path.join(this.root, '.landing'),
      (handle) => new DurableFileSink(handle, SYNC_EVERY, WRITE_BUFFER, this.writeBuffers),
    );
  }

  async init(): Promise<void> {
    await this.staging.open();
    this.small ??= await SmallBlobs.open(path.join(this.root, SMALL_BLOBS_FILE));
  }

  /** What uploads of stopped processes left in staging goes; never a running process's (see StagingArea). */
  sweepStaging(): Promise<number> {
    return this.staging.sweep();
  }

  private smallBlobs(): SmallBlobs {
    if (!this.small) throw new Error('FsBlobStore used before init()');
    return this.small;
  }

  /**
   * The only way from a key to a path, and the check of every key: each method calls it first,
   * small blobs included, so keys that do not match the shape never reach the disk or SQLite.
   */
  private pathOf(key: string): string {
    const m = KEY.exec(key);
    if (!m) throw new Error(`invalid blob key: ${JSON.stringify(key).slice(0, 100)}`);
    const [, tenant = '', hash = ''] = m;
    return path.join(this.root, tenant, hash.slice(0, 2), hash);
  }

  private stagingPath(id: string): string {
    if (!/^[A-Za-z0-9_-]{8,64}$/.test(id)) throw new Error('invalid staging id');
    return path.join(this.staging.dir, id);
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    const stagingId = randomBytes(16).toString('hex');
    const file = this.stagingPath(stagingId);
    const counter = new HashCounter(maxBytes);
    // Set inside the pipeline: the bytes of a small upload, or the staging file of a larger one.
    const into: { bytes?: Buffer; handle?: FileHandle } = {};
    const spill = async (chunks: AsyncIterable<Buffer>) => {
      const it = chunks[Symbol.asyncIterator]();
      const first = await readUpTo(it, SMALL_BLOB_BYTES);
      if (first.ended) {
        into.bytes = Buffer.concat(first.chunks);
        return;
      }
      into.handle = await this.staging.createFile(file);
      await pipeline(
        Readable.from(rest(first.chunks, it), { objectMode: false }),
        new DurableFileSink(into.handle, SYNC_EVERY, WRITE_BUFFER, this.writeBuffers),
      );
    };
    let spilling: Promise<void> | undefined;
    try {
      await pipeline(source, counter, (chunks: AsyncIterable<Buffer>) => {
        spilling = spill(chunks);
        return spilling;
      });
      const staged = { stagingId, sizeBytes: counter.bytes, sha256: await counter.digest() };
      if (into.bytes) this.held.set(stagingId, into.bytes);
      await into.handle?.close();
      return staged;
    } catch (err) {
      source.destroy();
      // pipeline rejects as soon as the source fails (a client disconnect), without waiting for
      // `spill`: the staging file may still be being created. Once `spill` has settled, whatever
      // it created is known and goes; before, a file created in that window was left behind, and
      // its descriptor with it.
      await spilling?.catch(() => {});
      if (into.handle) {
        await into.handle.close().catch(() => {});
        await rm(file, { force: true });
      }
      throw err;
    }
  }

  /**
   * One rename, then the folder's fsync so the new name survives a crash. The folder is created
   * only when the rename says it is missing: after a tenant's first uploads it always exists.
   *
   * If the key holds these bytes already (the same content address; the upload has pinned them,
   * so no sweeper deletes them meanwhile), the staged copy is redundant and is removed without
   * making the upload wait. Removing a large file frees its blocks inside the unlink, about 0.3 s
   * per GiB on a disk that discards freed blocks (ext4 `-o discard`); renaming the copy over the
   * stored file cost the same, since that frees the old file's blocks.
   */
  async commit(staged: StagedBlob, key: string): Promise<void> {
    const target = this.pathOf(key);
    const held = this.held.get(staged.stagingId);
    if (held) {
      this.held.delete(staged.stagingId);
      return this.smallBlobs().put(key, held);
    }
    const from = this.stagingPath(staged.stagingId);
    if (await exists(target)) return this.dropLater(staged.stagingId, from);
    try {
      await rename(from, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mkdir(path.dirname(target), { recursive: true });
      await rename(from, target);
    }
    await fsyncDir(path.dirname(target));
  }

  /** Unlinks a redundant staged file in the background (see commit); close() waits for it. */
  private dropLater(stagingId: string, file: string): void {
    const dropped = unlink(file)
      // A file that could not be removed stays in this process's staging folder until close().
      .catch(() => {})
      .finally(() => this.dropping.delete(stagingId));
    this.dropping.set(stagingId, dropped);
  }

  async discard(staged: StagedBlob): Promise<void> {
    if (this.held.delete(staged.stagingId) || this.dropping.has(staged.stagingId)) return;
    // A staged blob is one file: unlink it (after a commit it is gone, which is fine).
    await unlink(this.stagingPath(staged.stagingId)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  async stat(key: string): Promise<{ sizeBytes: number } | null> {
    const file = this.pathOf(key);
    const small = this.smallBlobs().size(key);
    if (small !== null) return { sizeBytes: small };
    try {
      return { sizeBytes: (await stat(file)).size };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(key);
    const small = this.smallBlobs().get(key);
    if (small)
      return Readable.from([range ? small.subarray(range.start, range.end + 1) : small], { objectMode: false });
    // Opening first turns a missing file into a rejection here rather than a stream error later.
    const handle = await open(file, 'r');
    return createReadStream('', {
      fd: handle,
      highWaterMark: CHUNK,
      ...(range ? { start: range.start, end: range.end } : {}),
    });
  }

  /** Both places: blobs stored as files before small ones moved into SQLite can still exist. */
  async delete(key: string): Promise<void> {
    const file = this.pathOf(key);
    await this.smallBlobs().delete(key);
    await unlink(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  land(landingKey: string, source: Readable, maxBytes: number): Promise<LandResult> {
    return this.landings.land(landingKey, source, maxBytes);
  }

  readLanded(landingKey: string): Promise<Readable> {
    return this.landings.read(landingKey);
  }

  /**
   * Reads the landing file once to hash it (a larger one not at all when `landed` gives its hash).
   * A small one is then held in memory, as `stage` holds small uploads; a larger one gets a second
   * name in this process's staging folder, which `commit` renames into place while the landing
   * file stays for a retry.
   */
  async stageLanded(landingKey: string, maxBytes: number, landed?: LandResult): Promise<StagedBlob | null> {
    const stagingId = randomBytes(16).toString('hex');
    const size = await this.landings.size(landingKey);
    if (size === null) return null;
    if (size <= SMALL_BLOB_BYTES) {
      const bytes = await this.landings.bytes(landingKey);
      if (bytes === null || (landed && landed.sizeBytes !== bytes.length)) return null;
      if (bytes.length > maxBytes) throw tooLarge(maxBytes);
      this.held.set(stagingId, bytes);
      const sha256 = landed?.sha256 ?? createHash('sha256').update(bytes).digest('hex');
      return { stagingId, sizeBytes: bytes.length, sha256 };
    }
    const into = this.stagingPath(stagingId);
    await this.staging.ensure();
    const hashed = await this.landings.hashAndLink(landingKey, maxBytes, into, landed);
    return hashed && { stagingId, ...hashed };
  }

  dropLanded(landingKey: string): Promise<void> {
    return this.landings.drop(landingKey);
  }

  sweepLandings(landedBefore: number): Promise<number> {
    return this.landings.sweep(landedBefore);
  }

  async ping(): Promise<void> {
    await access(this.root, constants.W_OK);
  }

  async close(): Promise<void> {
    await Promise.all(this.dropping.values());
    const small = this.small;
    this.small = null;
    this.held.clear();
    await small?.close();
    await this.staging.close();
  }
}

const tooLarge = (maxBytes: number) =>
  new CairnError('file_too_large', `Content is larger than the limit of ${maxBytes} bytes.`);

/** Reads chunks until more than `limit` bytes have come (ended: false) or the source ends (ended: true). */
async function readUpTo(it: AsyncIterator<Buffer>, limit: number): Promise<{ chunks: Buffer[]; ended: boolean }> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  while (bytes <= limit) {
    const next = await it.next();
    if (next.done) return { chunks, ended: true };
    chunks.push(next.value);
    bytes += next.value.length;
  }
  return { chunks, ended: false };
}

/** The chunks read so far, then the rest of the source. */
async function* rest(first: Buffer[], it: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield* first;
  for (let next = await it.next(); !next.done; next = await it.next()) yield next.value;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
