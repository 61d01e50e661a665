import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LandResult } from '../ports/blob-store.js';
import type { ResumableRow, ResumableSegment } from '../ports/resumable-upload-store.js';
import type { CoreDeps } from './context.js';
import { CairnError, unavailable } from './errors.js';
import { ARTIFACT_ID } from './ids.js';
import { activatePending, fillPending } from './pending-artifacts.js';
import { PLANS } from './plans.js';
import { PENDING_RETENTION_MS } from './presigned.js';
import { type Checksum, checkLength, hashing } from './resumable-checks.js';
import type { Caller } from './tenants.js';
import type { UploadRequest, UploadService } from './upload.js';
import { UploadLeases } from './upload-lease.js';

/** An unfinished resumable upload is gone this long after its creation (tus `Upload-Expires`). */
export const RESUMABLE_RETENTION_MS = PENDING_RETENTION_MS;
/** Unfinished resumable uploads a tenant may have at once. */
export const MAX_OPEN_UPLOADS = 20;
/** PATCHes one upload may take: each is a piece the last one reads, and a row entry. */
export const MAX_PIECES = 1000;
/**
 * How long a HEAD waits for the request holding an upload (a PATCH still recording its piece, or
 * finishing an upload whose bytes are all in) before it answers 503 with Retry-After.
 */
const HELD_WAIT_MS = 20_000;
const HELD_POLL_MS = 250;

export interface ResumableCreateRequest extends UploadRequest {
  lengthBytes: unknown;
}

/** What HEAD and each PATCH tell the client. */
export interface ResumableState {
  id: string;
  offsetBytes: number;
  lengthBytes: number;
  /** Null once the upload is finished (it is an artifact then). */
  expiresAt: number | null;
}

const offsetConflict = (message: string) => new CairnError('upload_offset_conflict', message);
const uploadGone = () =>
  new CairnError('not_found', 'No such upload: it is unknown, finished and removed, terminated or expired.');

export type ResumableDeps = Pick<
  CoreDeps,
  'tenantStore' | 'artifactStore' | 'resumables' | 'blobs' | 'clock' | 'log' | 'observer' | 'upgradeUrl'
>;

/**
 * Resumable uploads (the tus protocol at the edge). An upload is a pending artifact, created with
 * every check of an upload before any byte, plus a row of the ResumableUploadStore: its length,
 * its offset and the landed pieces that make up the bytes so far. Each PATCH lands its body as a
 * new piece under a key of its own and then records it, holding the upload's lease meanwhile, so
 * two requests never write into one piece, a request that lost its lease records nothing, and a
 * piece written but not recorded (a crash in between) is simply never read. The PATCH that
 * reaches the length assembles the pieces into one blob and activates the artifact, as a
 * presigned upload's completion does. State is in the metadata store and bytes in the blob store,
 * so any instance can take the next PATCH, also after a restart.
 */
export class ResumableUploadService {
  private readonly leases: UploadLeases;

  constructor(
    private readonly deps: ResumableDeps,
    private readonly uploads: UploadService,
  ) {
    this.leases = new UploadLeases(deps);
  }

  /** Creation: refuses what can be refused before any byte (fields, session, size, quota). */
  async create(
    caller: Caller,
    req: ResumableCreateRequest,
    idempotencyKey: string | undefined,
  ): Promise<{ state: ResumableState; replayed: boolean }> {
    // Namespaced: the same key on a direct upload must not replay this answer (or the reverse).
    const key = idempotencyKey === undefined ? undefined : `tus:${idempotencyKey}`;
    const earlier = await this.uploads.replay(caller, key);
    if (earlier) return { state: await this.replayedState(caller, earlier.body), replayed: true };

    const { resumables, clock, upgradeUrl } = this.deps;
    const now = clock.now();
    const expiresAt = now + RESUMABLE_RETENTION_MS;
    const pending = await this.uploads.createPending(caller, req, {
      sizeFor: (plan) => checkLength(req.lengthBytes, plan, upgradeUrl),
      idempotency:
        key === undefined
          ? undefined
          : { key, response: (row) => ({ status: 201, body: JSON.stringify({ upload_id: row.id }) }) },
      // The upload's row first: a crash before the artifact leaves only a row that expires.
      // Unfinished uploads hold bytes too: their lengths are reserved against the storage quota, and
      // a tenant has at most MAX_OPEN_UPLOADS of them, so uploads never finished cannot fill a disk.
      // The store checks both and inserts in one step, so concurrent creations cannot pass them.
      reserve: async (row, plan) => {
        const opened = await resumables.createResumable(
          { id: row.id, tenantId: row.tenantId, lengthBytes: row.sizeBytes, createdAt: now, expiresAt },
          { maxOpen: MAX_OPEN_UPLOADS, storageLimitBytes: PLANS[plan].storageBytes },
        );
        if (opened === 'too_many') {
          throw new CairnError(
            'quota_exceeded',
            `At most ${MAX_OPEN_UPLOADS} resumable uploads may be unfinished at once; finish one, or DELETE it to abandon it.`,
          );
        }
        if (opened === 'storage_full') throw this.uploads.storageFull(plan);
        return () => resumables.deleteResumable(row.tenantId, row.id);
      },
    });
    // A concurrent creation with the same key won: its upload is the answer.
    if (pending.kind === 'replay') {
      return { state: await this.replayedState(caller, pending.response.body), replayed: true };
    }
    const { row } = pending;
    const created: ResumableRow = {
      id: row.id,
      tenantId: row.tenantId,
      lengthBytes: row.sizeBytes,
      offsetBytes: 0,
      segments: [],
      createdAt: now,
      expiresAt,
      leaseOwner: null,
      leaseUntil: null,
    };
    // An empty file is complete as soon as it exists (tus allows Upload-Length: 0).
    if (row.sizeBytes === 0) return { state: await this.finish(created), replayed: false };
    return { state: toState(created), replayed: false };
  }

  private async replayedState(caller: Caller, body: string): Promise<ResumableState> {
    const id = (JSON.parse(body) as { upload_id?: unknown }).upload_id;
    const state = typeof id === 'string' ? await this.state(caller, id) : null;
    if (!state) {
      throw new CairnError(
        'not_found',
        `The upload ${String(id)} this Idempotency-Key created is gone (terminated, expired, or finished and deleted); send a new key to start another.`,
      );
    }
    return state;
  }

  /**
   * HEAD: how far the upload has come, as the offset a PATCH sent now will be accepted at. A
   * finished one answers with its offset at its length.
   *
   * While a request holds the upload (on any instance) its offset is about to move: a PATCH whose
   * connection was cut is still recording the piece that arrived, and the offset in the row is
   * stale until it has. So the HEAD waits until nobody holds the upload (the holder gives it back,
   * or a dead instance's hold lapses within LEASE_MS) and answers the offset then; a client that
   * trusts it never gets a 409 for it.
   */
  async state(caller: Caller, id: string): Promise<ResumableState | null> {
    if (!ARTIFACT_ID.test(id)) return null;
    const { resumables, artifactStore, clock } = this.deps;
    for (let waited = 0; ; waited += HELD_POLL_MS) {
      const row = await resumables.getResumable(caller.tenant.id, id);
      if (!row) {
        const artifact = await artifactStore.getArtifact(caller.tenant.id, id);
        return artifact?.status === 'active'
          ? { id, offsetBytes: artifact.sizeBytes, lengthBytes: artifact.sizeBytes, expiresAt: null }
          : null;
      }
      const now = clock.now();
      if (row.expiresAt <= now) return null;
      // Every byte arrived but the artifact was not made (its PATCH failed at the end): make it now,
      // so a client that sees the full offset and stops is right to. A PATCH holding the upload is
      // finishing it already.
      if (row.offsetBytes === row.lengthBytes) return this.finished(caller, row);
      if (!isHeld(row, now)) return toState(row);
      if (waited >= HELD_WAIT_MS) {
        throw unavailable('A PATCH of this upload is still in progress; ask again shortly.', 5);
      }
      await sleep(HELD_POLL_MS);
    }
  }

  /**
   * HEAD of an upload whose bytes are all in: answers once it is an artifact, finishing it here
   * if no request is (its last PATCH failed at the end), or waiting for the request that is (whose
   * answer the client may have lost), so that a full offset always means the artifact exists.
   */
  private async finished(caller: Caller, row: ResumableRow): Promise<ResumableState | null> {
    for (let waited = 0; ; waited += HELD_POLL_MS) {
      const leased = await this.leases.take(caller.tenant.id, row.id);
      if (leased === null) return this.state(caller, row.id);
      if (leased !== 'held') return this.leases.holding(leased, () => this.finish(leased.row));
      if (waited >= HELD_WAIT_MS) {
        throw unavailable('The upload is still being turned into its artifact; ask again shortly.', 5);
      }
      await sleep(HELD_POLL_MS);
    }
  }

  /**
   * PATCH: lands the body as the next piece (keeping what arrived if the connection drops, unless
   * a checksum was asked for), and finishes the upload when it is complete.
   */
  async append(
    caller: Caller,
    id: string,
    offset: number,
    source: Readable,
    checksum: Checksum | null,
    /** The body's Content-Length, when it announced one: refused at once if it cannot fit. */
    declaredBytes?: number,
  ): Promise<ResumableState> {
    const leased = ARTIFACT_ID.test(id) ? await this.leases.take(caller.tenant.id, id) : null;
    if (!leased || leased === 'held') {
      source.resume();
      if (leased === 'held' && !(await this.goneWhileHeld(caller.tenant.id, id))) {
        throw offsetConflict('Another PATCH of this upload is in progress; HEAD it and retry.');
      }
      if ((await this.deps.artifactStore.getArtifact(caller.tenant.id, id))?.status === 'active') {
        throw offsetConflict('This upload is already complete; GET /v1/artifacts/{id} for its record.');
      }
      throw uploadGone();
    }
    return this.leases.holding(leased, async (lost) => {
      const { row, owner } = leased;
      const refuse = (err: CairnError) => {
        source.resume();
        return err;
      };
      if (row.expiresAt <= this.deps.clock.now()) throw refuse(uploadGone());
      if (offset !== row.offsetBytes) {
        throw refuse(
          offsetConflict(
            `Upload-Offset is ${offset} but the upload has ${row.offsetBytes} bytes; HEAD it and continue from there.`,
          ),
        );
      }
      const missing = row.lengthBytes - row.offsetBytes;
      if (declaredBytes !== undefined && declaredBytes > missing) {
        throw refuse(
          new CairnError('file_too_large', `This body is ${declaredBytes} bytes; the upload misses only ${missing}.`),
        );
      }
      if (missing > 0 && row.segments.length >= MAX_PIECES) {
        throw refuse(
          new CairnError('quota_exceeded', `An upload takes at most ${MAX_PIECES} PATCHes; send the rest in fewer.`),
        );
      }
      let current = row;
      let landed: LandResult | undefined;
      if (missing > 0) {
        // A PATCH that lost the upload (its lease lapsed and another request took it) stops reading.
        const stop = () => source.destroy(new Error('the upload was taken over'));
        lost.addEventListener('abort', stop, { once: true });
        ({ row: current, landed } = await this.landPiece(row, owner, source, checksum));
        lost.removeEventListener('abort', stop);
      } else source.resume();
      if (current.offsetBytes !== current.lengthBytes) return toState(current);
      // One PATCH carried the whole upload (the common case): its hash is known already.
      return this.finish(current, current.segments.length === 1 ? landed : undefined);
    });
  }

  /** DELETE (termination): the upload, its pending artifact and its pieces go. */
  async terminate(caller: Caller, id: string): Promise<void> {
    const { resumables } = this.deps;
    // Under the lease: a PATCH or HEAD finishing the upload meanwhile would make it an artifact
    // from pieces going away.
    const leased = ARTIFACT_ID.test(id) ? await this.leases.take(caller.tenant.id, id) : null;
    const none = () =>
      new CairnError(
        'not_found',
        'No such upload in progress. A finished upload is an artifact: DELETE /v1/artifacts/{id} removes it.',
      );
    if (leased === 'held') {
      if (await this.goneWhileHeld(caller.tenant.id, id)) throw none();
      throw offsetConflict('A PATCH of this upload is in progress; retry when it is over.');
    }
    if (!leased) throw none();
    if (leased.row.expiresAt <= this.deps.clock.now()) {
      // Expired is gone for every request (HEAD, PATCH, DELETE alike); the sweeper removes it.
      await resumables.releaseResumable(leased.row.id, leased.owner);
      throw none();
    }
    if (!(await resumables.deleteResumable(caller.tenant.id, id))) throw none();
    // Its pending artifact goes with it: its owner's GET shows a pending upload, and this one is over.
    await this.deps.artifactStore.dropPending(caller.tenant.id, id);
    await this.dropPieces(leased.row.segments);
  }

  /**
   * Whether an upload someone holds is gone all the same: expired (the holder is the sweeper
   * removing it) or removed since.
   */
  private async goneWhileHeld(tenantId: string, id: string): Promise<boolean> {
    const row = await this.deps.resumables.getResumable(tenantId, id);
    return row === null || row.expiresAt <= this.deps.clock.now();
  }

  /** Lands the body as a new piece and records it; returns the row as it is now. */
  private async landPiece(
    row: ResumableRow,
    owner: string,
    source: Readable,
    checksum: Checksum | null,
  ): Promise<{ row: ResumableRow; landed?: LandResult }> {
    const { blobs, resumables } = this.deps;
    const landingKey = `uploads/${row.tenantId}/${row.id}.${row.offsetBytes}.${randomBytes(8).toString('hex')}`;
    const hash = checksum ? createHash(checksum.algorithm) : null;
    const body = hash ? Readable.from(hashing(source, hash)) : source;
    const landed = await blobs.land(landingKey, body, row.lengthBytes - row.offsetBytes);
    const piece: ResumableSegment = { landingKey, sizeBytes: landed.sizeBytes };
    if (hash && checksum) {
      // A piece cut short cannot match its checksum: nothing of it is kept (the client resends it).
      const matches = landed.complete && hash.digest('base64') === checksum.digest;
      if (!matches) {
        await this.dropPieces([piece]);
        if (!landed.complete) return { row };
        throw new CairnError(
          'checksum_mismatch',
          `The body does not match its Upload-Checksum (${checksum.algorithm}); nothing of it was kept.`,
        );
      }
    }
    if (landed.sizeBytes === 0) {
      await this.dropPieces([piece]);
      return { row };
    }
    if (!(await resumables.appendResumable(row.id, owner, row.offsetBytes, piece, this.deps.clock.now()))) {
      await this.dropPieces([piece]);
      throw offsetConflict('The upload changed while this PATCH ran (expired or taken over); HEAD it and retry.');
    }
    return {
      row: { ...row, offsetBytes: row.offsetBytes + piece.sizeBytes, segments: [...row.segments, piece] },
      landed,
    };
  }

  /**
   * Every byte is in: the pieces become one blob (hashed, deduplicated, committed; a single piece
   * this request landed is not read again, `onlyPiece` has its hash), the artifact
   * becomes active, and the upload's row and pieces go. Safe to run again after a failure at any
   * step: the pieces stay until the artifact is active.
   */
  private async finish(row: ResumableRow, onlyPiece?: LandResult): Promise<ResumableState> {
    const { artifactStore, blobs, resumables } = this.deps;
    let artifact = await artifactStore.getArtifact(row.tenantId, row.id);
    if (artifact?.status === 'pending' && artifact.contentHash === '') {
      const [only] = row.segments;
      const staged =
        row.segments.length === 1 && only
          ? await blobs.stageLanded(only.landingKey, row.lengthBytes, onlyPiece)
          : await blobs.stage(Readable.from(this.readPieces(row.segments)), row.lengthBytes);
      if (!staged) throw new Error(`The piece of upload ${row.id} is missing from the blob store.`);
      await fillPending(this.deps, this.uploads, artifact, staged, 'Upload-Length');
      artifact = await artifactStore.getArtifact(row.tenantId, row.id);
    }
    if (artifact?.status === 'pending') artifact = await activatePending(this.deps, row.tenantId, row.id);
    if (artifact?.status !== 'active') throw uploadGone();
    await resumables.deleteResumable(row.tenantId, row.id);
    await this.dropPieces(row.segments);
    this.deps.observer?.uploadStored(row.lengthBytes);
    return { id: row.id, offsetBytes: row.lengthBytes, lengthBytes: row.lengthBytes, expiresAt: null };
  }

  private async *readPieces(segments: ResumableSegment[]): AsyncGenerator<Buffer> {
    for (const segment of segments)
      yield* (await this.deps.blobs.readLanded(segment.landingKey)) as AsyncIterable<Buffer>;
  }

  /** Best effort: what stays behind is swept with the abandoned landings. */
  private async dropPieces(segments: ResumableSegment[]): Promise<void> {
    for (const { landingKey } of segments) {
      await this.deps.blobs.dropLanded(landingKey).catch((err: unknown) => {
        this.deps.log.warn({ err: String(err), landingKey }, 'could not remove an upload piece; the sweeper will');
      });
    }
  }
}

/** Whether a request holds the upload at `now` (a lapsed hold is nobody's: its holder died). */
const isHeld = (row: ResumableRow, now: number) =>
  row.leaseOwner !== null && row.leaseUntil !== null && row.leaseUntil > now;

const toState = (row: ResumableRow): ResumableState => ({
  id: row.id,
  offsetBytes: row.offsetBytes,
  lengthBytes: row.lengthBytes,
  expiresAt: row.expiresAt,
});
