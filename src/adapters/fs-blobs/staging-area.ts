import { createHash, randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, rm, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';

/** How often a running process marks its staging folder as in use. */
const HEARTBEAT_MS = 30_000;
/** A staging entry left unmarked and unwritten this long belongs to a process that stopped. */
const STALE_MS = 5 * 60_000;

export interface StagingAreaOptions {
  heartbeatMs?: number;
  staleMs?: number;
}

/**
 * The staging folder (`<blobs>/.staging`) shared by every process that opens the same blob folder:
 * the server, and each `cairn admin` command run beside it. Each process stages into a folder of
 * its own, `<pid>.<host tag>.<random>`, and marks it in use (its mtime) every HEARTBEAT_MS.
 *
 * What a stopped process left (a crash, a kill) is removed by `sweep`, which every start and every
 * sweeper run calls: an entry is dead when its name says it is a process of this host that no
 * longer runs, or when nothing has marked or written it for STALE_MS (a process of another host
 * sharing the folder, a reused pid, a file of the layout before per-process folders). A running
 * process's folder is neither, so an admin command or a second server never removes an upload in
 * flight (it used to: every start emptied the whole folder).
 */
export class StagingArea {
  /** This process's own folder: where its uploads are staged. */
  readonly dir: string;
  private readonly heartbeatMs: number;
  private readonly staleMs: number;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly root: string,
    opts: StagingAreaOptions = {},
  ) {
    this.dir = path.join(root, `${process.pid}.${HOST_TAG}.${randomBytes(6).toString('hex')}`);
    this.heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    this.staleMs = opts.staleMs ?? STALE_MS;
  }

  /** Creates this process's folder, starts marking it, and sweeps what stopped processes left. */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    this.heartbeat ??= setInterval(() => void this.mark(), this.heartbeatMs).unref();
    await this.sweep();
  }

  /**
   * Creates the new staging file `file` (a path in this process's folder), remaking the folder
   * first if something removed it from outside (an operator's `rm -r`).
   */
  async createFile(file: string): Promise<FileHandle> {
    try {
      return await open(file, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mkdir(this.dir, { recursive: true });
      return open(file, 'wx');
    }
  }

  /** Makes sure this process's folder exists (remade if something removed it from outside). */
  async ensure(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  /** Removes the entries of stopped processes (see the class comment); returns how many. */
  async sweep(): Promise<number> {
    let entries: Dirent[];
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch (err) {
      // The whole staging folder removed from outside: nothing left to sweep (see mark).
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const entry of entries) {
      const full = path.join(this.root, entry.name);
      if (full === this.dir || !(await this.isDead(entry.name, full))) continue;
      await rm(full, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  /** Stops marking and removes this process's folder with whatever is still in it. */
  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    await rm(this.dir, { recursive: true, force: true });
  }

  private async mark(): Promise<void> {
    const now = new Date();
    try {
      await utimes(this.dir, now, now);
    } catch {
      // Removed from outside (an operator's rm -r): stage into a new one of the same name.
      await mkdir(this.dir, { recursive: true }).catch(() => {});
    }
  }

  private async isDead(name: string, full: string): Promise<boolean> {
    let mtimeMs: number;
    try {
      mtimeMs = (await lstat(full)).mtimeMs;
    } catch {
      return false; // Gone already: another process swept it.
    }
    if (Date.now() - mtimeMs > this.staleMs) return true;
    const owner = OWNER.exec(name);
    return owner?.[2] === HOST_TAG && !isRunning(Number(owner[1]));
  }
}

/** This host, as its staging folders name it (a digest: any host name fits in a file name). */
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 12);
const OWNER = /^(\d+)\.([0-9a-f]{12})\.[0-9a-f]+$/;

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
