import type { Readable } from 'node:stream';
import type { ArtifactRow } from '../ports/metadata-store.js';
import type { ArtifactRecord, UploadReceipt, UploadTicket } from '../wire/artifacts.js';
import type { CoreDeps } from './context.js';
import { CairnError, invalid } from './errors.js';
import { checkArtifactId, requireReadable } from './lifecycle.js';
import { activatePending, fillPending } from './pending-artifacts.js';
import { LARGE_LIMIT_TEXT, LIMITS, MULTIPART_LIMIT_TEXT, PLANS } from './plans.js';
import { artifactRecord } from './records.js';
import type { Caller } from './tenants.js';
import { toIso } from './time.js';
import type { UploadRequest, UploadService } from './upload.js';
import { type ReleaseSlot, UPLOAD_SLOT_AFTER_BYTES, type UploadSlots } from './upload-slots.js';

const UPLOAD_PURPOSE = 'presigned-upload';
/** How long the PUT URL stays valid. */
export const UPLOAD_URL_SECONDS = 3600;
/** Pending uploads never completed are purged after this. */
export const PENDING_RETENTION_MS = 24 * 3600 * 1000;

export interface UploadUrlRequest extends UploadRequest {
  sizeBytes?: unknown;
}

/** Object storage receives the bytes itself; the landing key is where they wait for `complete`. */
const landingKey = (tenantId: string, artifactId: string) => `uploads/${tenantId}/${artifactId}`;

/** The ports and settings this service uses, of CoreDeps. */
export type PresignedDeps = Pick<
  CoreDeps,
  'tenantStore' | 'artifactStore' | 'sharingStore' | 'blobs' | 'clock' | 'log' | 'origins' | 'signer' | 'upgradeUrl'
>;

/**
 * Large-file uploads in three steps (Pro only): a pending artifact and a PUT URL, the PUT of the
 * bytes (straight to object storage when it can sign URLs, else to Cairn's own signed endpoint),
 * then `complete`, which hashes what arrived, dedups it and makes the artifact visible.
 */
export class PresignedUploadService {
  constructor(
    private readonly deps: PresignedDeps,
    private readonly uploads: UploadService,
    private readonly uploadSlots: UploadSlots,
  ) {}

  async requestUrl(caller: Caller, req: UploadUrlRequest): Promise<UploadTicket> {
    return (await this.reserve(caller, req, undefined)).ticket;
  }

  /**
   * A pending artifact and its PUT URL. With an Idempotency-Key, a repeat within 24 hours reserves
   * nothing new: it answers the first reservation with a fresh URL while that one is pending.
   */
  async reserve(
    caller: Caller,
    req: UploadUrlRequest,
    idempotencyKey: string | undefined,
  ): Promise<{ ticket: UploadTicket; replayed: boolean }> {
    // Namespaced: the same key on a direct or tus upload must not replay this answer (or the reverse).
    const key = idempotencyKey === undefined ? undefined : `upload-url:${idempotencyKey}`;
    const earlier = await this.uploads.replay(caller, key);
    if (earlier) return { ticket: await this.replayedTicket(caller, earlier.body), replayed: true };
    const { upgradeUrl } = this.deps;
    const created = await this.uploads.createPending(caller, req, {
      sizeFor: (plan) => {
        if (!PLANS[plan].presignedUpload) {
          throw new CairnError(
            'quota_exceeded',
            `Presigned uploads are a Pro feature; use a multipart upload (up to ${MULTIPART_LIMIT_TEXT}).`,
            { upgradeUrl },
          );
        }
        const size = req.sizeBytes;
        if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > LIMITS.presignedBytes) {
          throw invalid(`size_bytes must be a whole number of bytes from 1 to ${LARGE_LIMIT_TEXT}`);
        }
        return size;
      },
      idempotency:
        key === undefined
          ? undefined
          : { key, response: (row) => ({ status: 201, body: JSON.stringify({ artifact_id: row.id }) }) },
    });
    if (created.kind === 'replay') {
      return { ticket: await this.replayedTicket(caller, created.response.body), replayed: true };
    }
    return { ticket: await this.ticketFor(created.row), replayed: false };
  }

  /** The reservation an Idempotency-Key made, with a fresh URL, while it is still pending. */
  private async replayedTicket(caller: Caller, body: string): Promise<UploadTicket> {
    const id = (JSON.parse(body) as { artifact_id?: unknown }).artifact_id;
    const row = typeof id === 'string' ? await this.deps.artifactStore.getArtifact(caller.tenant.id, id) : null;
    if (row?.status !== 'pending' || row.createdAt + PENDING_RETENTION_MS <= this.deps.clock.now()) {
      throw new CairnError(
        'upload_not_found',
        `The upload this Idempotency-Key reserved (${String(id)}) is no longer pending: completed, deleted, or ` +
          `released after 24 hours. GET /v1/artifacts/${String(id)} shows its record if it was completed; send a ` +
          'new key to reserve another',
      );
    }
    return this.ticketFor(row);
  }

  /** Where to PUT a pending artifact's bytes, signed for UPLOAD_URL_SECONDS from now. */
  private async ticketFor(row: ArtifactRow): Promise<UploadTicket> {
    const { blobs, signer, origins, clock } = this.deps;
    const expiresAt = Math.floor(clock.now() / 1000) + UPLOAD_URL_SECONDS;
    let url: string;
    let headers: Record<string, string> = {};
    if (blobs.presignUpload) {
      ({ url, headers } = await blobs.presignUpload(
        landingKey(row.tenantId, row.id),
        row.sizeBytes,
        UPLOAD_URL_SECONDS,
      ));
    } else {
      url = `${origins.api}/v1/uploads/${row.id}?exp=${expiresAt}&sig=${signer.sign(UPLOAD_PURPOSE, row.id, expiresAt)}`;
    }
    return {
      artifact_id: row.id,
      status: 'pending',
      upload_url: url,
      upload_expires_at: toIso(expiresAt * 1000),
      upload_method: 'PUT',
      upload_headers: headers,
    };
  }

  /** Cairn's own PUT endpoint, for blob stores that cannot sign one. The signature is the authority. */
  async receive(
    id: string,
    exp: string | undefined,
    sig: string | undefined,
    source: Readable,
  ): Promise<UploadReceipt> {
    const { artifactStore, signer, clock } = this.deps;
    const valid =
      exp !== undefined &&
      sig !== undefined &&
      /^\d{1,12}$/.test(exp) &&
      signer.verify(UPLOAD_PURPOSE, id, Number(exp), sig, clock.now());
    const found = valid ? await artifactStore.getArtifactAnyTenant(id) : null;
    if (found?.artifact.status !== 'pending' || found.tenant.suspended) {
      source.resume();
      throw new CairnError('upload_not_found', 'This upload URL is invalid, expired or already completed.');
    }
    const { artifact } = found;
    // Before any byte is read: a tenant at its limit of large uploads is refused (UploadSlots).
    let release: ReleaseSlot | null = null;
    try {
      if (artifact.sizeBytes > UPLOAD_SLOT_AFTER_BYTES) release = this.uploadSlots.take(artifact.tenantId);
    } catch (err) {
      source.resume();
      throw err;
    }
    let filled: boolean;
    try {
      filled = await fillPending(
        this.deps,
        this.uploads,
        artifact,
        await this.uploads.stage(source, artifact.sizeBytes),
        'size_bytes',
      );
    } finally {
      release?.();
    }
    if (!filled) throw new CairnError('upload_not_found', 'This upload was completed or removed meanwhile.');
    return { artifact_id: id, size_bytes: artifact.sizeBytes };
  }

  /**
   * Idempotent: completing an already complete upload returns its record. On object storage the
   * landed object is kept until the artifact is active, so a failure at any step before that
   * (hashing, pinning, the copy, the store) leaves everything a retry needs.
   */
  async complete(caller: Caller, id: string): Promise<ArtifactRecord> {
    checkArtifactId(id);
    const { artifactStore, sharingStore, clock, origins } = this.deps;
    const tenantId = caller.tenant.id;
    let row = await artifactStore.getArtifact(tenantId, id);
    if (row?.status === 'pending' && row.contentHash === '') {
      row = await this.takeLanded(tenantId, row);
    }
    if (row?.status === 'pending') {
      if (row.contentHash === '')
        throw new CairnError('upload_not_found', 'The bytes have not been uploaded yet; PUT them to upload_url first.');
      row = await activatePending(this.deps, tenantId, id);
    }
    const readable = requireReadable(row, clock.now(), id);
    await this.dropLanded(tenantId, id);
    return artifactRecord(readable, await sharingStore.getPageForArtifact(tenantId, id), origins);
  }

  /** Hashes the landed bytes, makes them durable under their content address and records them. */
  private async takeLanded(tenantId: string, row: ArtifactRow): Promise<ArtifactRow | null> {
    const { artifactStore, blobs } = this.deps;
    const staged = await blobs.stageLanded(landingKey(tenantId, row.id), row.sizeBytes);
    // Nothing landed, or a concurrent complete finished and dropped it: the row says which.
    if (staged) await fillPending(this.deps, this.uploads, row, staged, 'size_bytes');
    return artifactStore.getArtifact(tenantId, row.id);
  }

  /** The artifact is active: its landed copy is no longer needed (the sweeper gets any it misses). */
  private async dropLanded(tenantId: string, id: string): Promise<void> {
    try {
      await this.deps.blobs.dropLanded(landingKey(tenantId, id));
    } catch (err) {
      this.deps.log.warn({ err: String(err), artifactId: id }, 'could not remove a landed upload; the sweeper will');
    }
  }
}
