import { randomBytes } from 'node:crypto';
import type { ResumableRow } from '../ports/resumable-upload-store.js';
import type { CoreDeps } from './context.js';

/**
 * How long a request holds a resumable upload, renewed while it runs. A request on an instance
 * that died keeps the upload for at most this long; clients are told to retry 409s after a HEAD.
 * Short enough for tus-js-client's default retries (0, 1, 3 and 5 s) to outlast it.
 */
export const LEASE_MS = 8_000;
const RENEW_EVERY_MS = 2_000;

/** A resumable upload held by one request: the row as it was when taken, and the holder's token. */
export interface Leased {
  row: ResumableRow;
  owner: string;
}

/**
 * The one-writer rule of resumable uploads: a request takes an upload's lease before it writes
 * or finishes it, renews it while it works, and gives it back. The store decides who holds it
 * (one conditional UPDATE), so this holds across instances.
 */
export class UploadLeases {
  constructor(private readonly deps: Pick<CoreDeps, 'resumables' | 'clock' | 'log'>) {}

  /** The upload for a new holder: the row as leased, `'held'` by another request, or null when there is none. */
  async take(tenantId: string, id: string): Promise<Leased | 'held' | null> {
    const owner = randomBytes(12).toString('hex');
    const now = this.deps.clock.now();
    const row = await this.deps.resumables.leaseResumable(tenantId, id, owner, now, now + LEASE_MS);
    return row === null || row === 'held' ? row : { row, owner };
  }

  /**
   * Runs `work` with the lease renewed meanwhile, and gives it back after. `lost` aborts when a
   * renewal finds the lease taken by another request (this one's lapsed): stop writing then.
   */
  async holding<T>(leased: Leased, work: (lost: AbortSignal) => Promise<T>): Promise<T> {
    const { resumables, clock, log } = this.deps;
    const { row, owner } = leased;
    const lost = new AbortController();
    const renew = setInterval(() => {
      resumables.renewResumableLease(row.id, owner, clock.now() + LEASE_MS).then(
        (held) => {
          if (!held) lost.abort();
        },
        (err: unknown) => {
          log.warn({ err: String(err), uploadId: row.id }, 'could not renew an upload lease');
        },
      );
    }, RENEW_EVERY_MS);
    try {
      return await work(lost.signal);
    } finally {
      clearInterval(renew);
      await resumables.releaseResumable(row.id, owner).catch((err: unknown) => {
        log.warn({ err: String(err), uploadId: row.id }, 'could not release an upload lease; it lapses by itself');
      });
    }
  }
}
