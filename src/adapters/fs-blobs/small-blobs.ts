import { type FileHandle, open } from 'node:fs/promises';
import { Connection } from '../sqlite/database.js';

/**
 * Small blobs in one SQLite file beside the blob folders, so that storing one costs a share of
 * a group commit instead of a file of its own.
 *
 * A durable file per blob takes nine disk operations on libuv's thread pool (open, write, fsync,
 * close, rename, open the folder, fsync it, close it, drop the staging name), two of them
 * fsyncs. For a 4 KB upload that was most of the time spent storing it. Here the blobs that
 * arrive in the same turn of the event loop are inserted in one transaction (the connection's
 * group commit), and one `fdatasync` of the WAL makes a whole batch durable.
 *
 * Why the WAL is synced by hand: with `synchronous = FULL` SQLite would fsync at every commit
 * on the event loop, where a disk busy writing back a large upload can hold it for tens of
 * milliseconds and stall every request. The connection runs with `NORMAL` instead (a commit
 * writes its WAL frames without syncing them; checkpoints sync the WAL before copying it and
 * the database after, see https://sqlite.org/pragma.html#pragma_synchronous), and `put`
 * resolves only after an `fdatasync` of the `-wal` file, run on the thread pool. The WAL keeps
 * its inode while any connection is open (SQLite reuses it from the start after a checkpoint and
 * deletes it only when the last connection closes), so the handle opened at start stays right.
 * SQLite's automatic checkpoint (every 1,000 WAL pages, about 4 MB of small blobs) still syncs on
 * the event loop, as it does for the metadata database: one pause per thousand small uploads
 * rather than one per batch.
 */
export class SmallBlobs {
  private constructor(
    private readonly c: Connection,
    private readonly wal: FileHandle,
  ) {}

  static async open(file: string): Promise<SmallBlobs> {
    const c = new Connection(file);
    try {
      // After this the WAL file exists: a new database creates it with the table, an existing
      // one opened it when the connection switched to WAL mode.
      c.db.exec('CREATE TABLE IF NOT EXISTS small_blobs (key TEXT PRIMARY KEY, bytes BLOB NOT NULL)');
      return new SmallBlobs(c, await open(`${file}-wal`, 'r+'));
    } catch (err) {
      c.close();
      throw err;
    }
  }

  /** Stores `bytes` under `key` (kept as they are if the key holds bytes already); durable once resolved. */
  put(key: string, bytes: Buffer): Promise<void> {
    return this.tracked(async () => {
      await this.c.writeTogether(() =>
        this.c.run('INSERT INTO small_blobs (key, bytes) VALUES (?, ?) ON CONFLICT (key) DO NOTHING', key, bytes),
      );
      await this.syncWal();
    });
  }

  get(key: string): Buffer | null {
    return this.c.get<{ bytes: Buffer }>('SELECT bytes FROM small_blobs WHERE key = ?', key)?.bytes ?? null;
  }

  size(key: string): number | null {
    return this.c.get<{ n: number }>('SELECT length(bytes) AS n FROM small_blobs WHERE key = ?', key)?.n ?? null;
  }

  /** Removes the blob; durable once resolved, so it cannot come back after a crash. */
  delete(key: string): Promise<void> {
    return this.tracked(async () => {
      const removed = await this.c.writeTogether(() => this.c.run('DELETE FROM small_blobs WHERE key = ?', key));
      if (removed > 0) await this.syncWal();
    });
  }

  /** Lets every put and delete already asked for finish (committed and synced) first. */
  async close(): Promise<void> {
    await Promise.allSettled(this.inFlight);
    await this.wal.close();
    this.c.close();
  }

  /** Puts and deletes not yet durable: a write still queued for its group commit, or its sync. */
  private readonly inFlight = new Set<Promise<void>>();

  private tracked(op: () => Promise<void>): Promise<void> {
    const p = op();
    this.inFlight.add(p);
    const forget = () => this.inFlight.delete(p);
    p.then(forget, forget);
    return p;
  }

  /** The `fdatasync` in flight, if any. */
  private running: Promise<void> | null = null;
  /** The next one, not started yet: everyone who joins it committed before it starts. */
  private pending: Promise<void> | null = null;

  /**
   * Resolves once everything committed before the call is on the disk. A sync already running
   * may have started before the caller's commit, so the caller joins the next one, which starts
   * when the running one ends and a turn of the event loop later, so that every write of a
   * group commit (their promises settle together) shares it: one `fdatasync` per batch.
   */
  private syncWal(): Promise<void> {
    this.pending ??= (this.running ?? Promise.resolve())
      .catch(() => {})
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(() => {
        this.pending = null;
        const run = this.wal.datasync();
        this.running = run;
        return run.finally(() => {
          if (this.running === run) this.running = null;
        });
      });
    return this.pending;
  }
}
