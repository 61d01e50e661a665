import { once } from 'node:events';
import { createReadStream, type Dirent } from 'node:fs';
import { type FileHandle, link, mkdir, open, readdir, readFile, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { LandResult } from '../../ports/blob-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import { HashCounter } from '../blob-common/hash-counter.js';
import { feedLanding } from '../blob-common/land-stream.js';
import { checkLandingKey } from '../blob-common/landing-key.js';
import { fsyncDir } from './fsync-dir.js';

/**
 * Landing objects on the local disk: `<blobs>/.landing/<tenant>/<name>`, one file each, written
 * once. Staging one for a commit hard-links it into the staging folder (same filesystem), so the
 * commit's rename moves the link and the landing file stays until it is dropped.
 */
export class LandingArea {
  constructor(
    private readonly root: string,
    /** The blob store's durable sink for a new file (large buffered writes, write-back as it goes, an fsync at the end). */
    private readonly sinkOf: (handle: FileHandle) => Writable,
  ) {}

  private fileOf(landingKey: string): string {
    const [, tenant, name] = checkLandingKey(landingKey).split('/');
    return path.join(this.root, tenant!, name!);
  }

  /** What the core records as received then survives a crash of the machine, not only of Cairn. */
  async land(landingKey: string, source: Readable, maxBytes: number): Promise<LandResult> {
    const file = this.fileOf(landingKey);
    await mkdir(path.dirname(file), { recursive: true });
    const handle = await open(file, 'wx');
    const sink = this.sinkOf(handle);
    try {
      const landed = await feedLanding(source, maxBytes, async (chunk) => {
        // `once` rejects if the sink fails (a disk error) while this waits.
        if (!sink.write(chunk)) await once(sink, 'drain');
      });
      sink.end();
      await finished(sink);
      await handle.close();
      await fsyncDir(path.dirname(file));
      return landed;
    } catch (err) {
      sink.destroy();
      await handle.close().catch(() => {});
      await rm(file, { force: true });
      throw err;
    }
  }

  async read(landingKey: string): Promise<Readable> {
    const handle = await open(this.fileOf(landingKey), 'r');
    return createReadStream('', { fd: handle, highWaterMark: 1024 * 1024 });
  }

  /**
   * Hashes the file (unless `landed` already says its size and hash); then `into` (a path in this
   * process's staging folder) becomes a second name of it.
   */
  async hashAndLink(
    landingKey: string,
    maxBytes: number,
    into: string,
    landed?: LandResult,
  ): Promise<{ sizeBytes: number; sha256: string } | null> {
    const file = this.fileOf(landingKey);
    let hashed: { sizeBytes: number; sha256: string };
    if (landed) {
      if ((await this.size(landingKey)) !== landed.sizeBytes) return null;
      if (landed.sizeBytes > maxBytes) throw tooLarge(maxBytes);
      hashed = { sizeBytes: landed.sizeBytes, sha256: landed.sha256 };
    } else {
      let handle: FileHandle;
      try {
        handle = await open(file, 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
      const counter = new HashCounter(maxBytes);
      await pipeline(
        createReadStream('', { fd: handle, highWaterMark: 1024 * 1024 }),
        counter,
        new Writable({ write: (_chunk, _enc, done) => done() }),
      );
      hashed = { sizeBytes: counter.bytes, sha256: await counter.digest() };
    }
    await link(file, into);
    return hashed;
  }

  /** The whole file, for landing objects small enough to be kept in memory until their commit. */
  async bytes(landingKey: string): Promise<Buffer | null> {
    try {
      return await readFile(this.fileOf(landingKey));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async size(landingKey: string): Promise<number | null> {
    try {
      return (await stat(this.fileOf(landingKey))).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async drop(landingKey: string): Promise<void> {
    await unlink(this.fileOf(landingKey)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }

  /** Removes files last written before `landedBefore` (ms); returns how many. */
  async sweep(landedBefore: number): Promise<number> {
    let removed = 0;
    for (const tenant of await entries(this.root)) {
      if (!tenant.isDirectory()) continue;
      const dir = path.join(this.root, tenant.name);
      for (const entry of await entries(dir)) {
        const file = path.join(dir, entry.name);
        const mtime = await stat(file).then(
          (s) => s.mtimeMs,
          () => null,
        );
        if (mtime !== null && mtime < landedBefore) {
          await rm(file, { force: true });
          removed++;
        }
      }
    }
    return removed;
  }
}

const tooLarge = (maxBytes: number) =>
  new CairnError('file_too_large', `Content is larger than the limit of ${maxBytes} bytes.`);

async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
