import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StagedBlob } from '../ports/blob-store.js';
import type { ArtifactRow, BlobPin, IdempotentResponse } from '../ports/metadata-store.js';
import { STALE_CLAIM_MS } from './blob-claims.js';
import { resolveContentType } from './content-type.js';
import { blobKey, type CoreDeps } from './context.js';
import { CairnError, invalid, unavailable } from './errors.js';
import { newArtifactId } from './ids.js';
import { settleExpiry } from './lifecycle.js';
import { LIMITS, PLANS, type PlanName } from './plans.js';
import { artifactRecord } from './records.js';
import type { Caller } from './tenants.js';
import { expiresAtFor } from './ttl.js';
import type { UploadRequest } from './upload-request.js';
import { checkContentType, checkFilename, checkMetadata, optionalLabel, parseBooleanFlag } from './validation.js';

export type { UploadRequest } from './upload-request.js';

export interface UploadResult extends IdempotentResponse {
  replayed: boolean;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,256}$/;

export function checkIdempotencyKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (!IDEMPOTENCY_KEY.test(key)) throw invalid('Idempotency-Key must be 1-256 printable ASCII characters.');
  return key;
}

/** How long an upload waits for a sweeper's delete, or another upload's write, of the same bytes: 100 × 100 ms. */
export interface PinWait {
  attempts: number;
  delayMs: number;
}

/**
 * Seconds a client is told to wait when the bytes stay claimed for deletion: a claim that outlived
 * the whole wait belongs to a sweeper that died, and is taken over once it is stale.
 */
export const PIN_RETRY_AFTER_SECONDS = Math.ceil(STALE_CLAIM_MS / 2000);
/**
 * How long an upload may take to put bytes in place (one rename, or one CopyObject of up to 5 GiB)
 * and record them; past it another upload of the same bytes may take the write over, so that
 * one that died holds them up no longer than a sweeper that died holds its delete claim.
 */
export const WRITE_CLAIM_MS = STALE_CLAIM_MS;
/** Seconds a client is told to wait when another upload is storing the same bytes: most writes are far shorter. */
const WRITE_RETRY_AFTER_SECONDS = 5;

/** The write of a blob's bytes that `pin` took, until its upload records them or gives it back. */
export interface BlobWrite {
  tenantId: string;
  contentHash: string;
  owner: string;
}

/** The ports and settings this service uses, of CoreDeps. */
export type UploadDeps = Pick<
  CoreDeps,
  'tenantStore' | 'artifactStore' | 'blobs' | 'clock' | 'log' | 'observer' | 'origins' | 'upgradeUrl'
>;

/**
 * The upload path of multipart and JSON uploads and of both MCP servers (presigned and resumable
 * completions share its pin and write): check what can be checked before the bytes, stream them
 * to staging while hashing, then validate, pin the blob, make the bytes durable and insert the
 * row in one transaction. A failure at any step leaves no artifact, and no staged bytes.
 */
export class UploadService {
  constructor(
    private readonly deps: UploadDeps,
    private readonly pinWait: PinWait = { attempts: 100, delayMs: 100 },
  ) {}

  /** Before any bytes: an earlier response for this idempotency key, if any. */
  async replay(caller: Caller, idempotencyKey: string | undefined): Promise<UploadResult | null> {
    if (idempotencyKey === undefined) return null;
    const response = await this.deps.artifactStore.getIdempotency(
      caller.tenant.id,
      idempotencyKey,
      this.deps.clock.now() - LIMITS.idempotencySeconds * 1000,
    );
    return response ? { ...response, replayed: true } : null;
  }

  /** Fails fast on what is already known, so a doomed upload is refused before its bytes are read. */
  async precheck(caller: Caller, req: UploadRequest): Promise<void> {
    const { tenantStore } = this.deps;
    const session = optionalLabel(req.sessionId, 'session_id');
    if (req.ttl !== undefined) expiresAtFor(req.ttl, caller.tenant.plan, this.deps.clock.now(), this.deps.upgradeUrl);
    await this.refuseSealed(caller.tenant.id, session);
    await settleExpiry(this.deps, caller.tenant.id);
    const tenant = await tenantStore.getTenant(caller.tenant.id);
    if (tenant && tenant.storageBytes >= PLANS[tenant.plan].storageBytes) throw this.storageFull(tenant.plan);
  }

  /** A sealed session takes no more uploads: checked before the bytes, and again before the row lands. */
  private async refuseSealed(tenantId: string, session: string | null): Promise<void> {
    if (session !== null && (await this.deps.artifactStore.getSession(tenantId, session))?.sealedAt != null) {
      throw sealed(session);
    }
  }

  /**
   * The artifact of an upload whose bytes come later (presigned and resumable), as a pending row:
   * the size the client declared, checked for the plan by `opts.sizeFor`, every field validated,
   * the session not sealed, the storage quota not exceeded by the declared size; then `reserve`
   * (what the upload needs beside the row) and the insert, with the idempotency record when a key
   * is given. A repeat of that key answers the earlier response and undoes `reserve`.
   */
  async createPending(caller: Caller, req: UploadRequest, opts: PendingOptions): Promise<PendingResult> {
    const { tenantStore, artifactStore, clock, upgradeUrl } = this.deps;
    await settleExpiry(this.deps, caller.tenant.id);
    const tenant = (await tenantStore.getTenant(caller.tenant.id)) ?? caller.tenant;
    const size = opts.sizeFor(tenant.plan);
    const now = clock.now();
    const row = buildArtifactRow(
      tenant.id,
      tenant.plan,
      req,
      { sizeBytes: size, sha256: '' },
      now,
      upgradeUrl,
      'pending',
    );
    await this.refuseSealed(tenant.id, row.sessionId);
    const limit = PLANS[tenant.plan].storageBytes;
    if (tenant.storageBytes >= limit || tenant.storageBytes + size > limit) throw this.storageFull(tenant.plan);
    const undo = opts.reserve ? await opts.reserve(row, tenant.plan) : null;
    let inserted: Awaited<ReturnType<typeof artifactStore.insertArtifact>>;
    try {
      inserted = await artifactStore.insertArtifact({
        artifact: row,
        storageLimitBytes: limit,
        ...(opts.idempotency === undefined
          ? {}
          : {
              idempotency: {
                key: opts.idempotency.key,
                notBefore: now - LIMITS.idempotencySeconds * 1000,
                response: opts.idempotency.response(row),
              },
            }),
      });
    } catch (err) {
      await undo?.();
      throw err;
    }
    if (inserted.kind === 'replay') {
      // A concurrent creation with the same key won: its answer is this one's.
      await undo?.();
      return { kind: 'replay', response: inserted.response };
    }
    return { kind: 'created', row };
  }

  stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    return this.deps.blobs.stage(source, maxBytes);
  }

  async finish(
    caller: Caller,
    req: UploadRequest,
    staged: StagedBlob,
    idempotencyKey: string | undefined,
  ): Promise<UploadResult> {
    let result: UploadResult;
    try {
      result = await this.commit(caller, req, staged, idempotencyKey);
    } catch (err) {
      await this.deps.blobs.discard(staged).catch(() => {});
      throw err;
    }
    // The artifact exists now: a blob store that fails to drop the staged copy (S3 gone at this
    // very moment) must not turn its 201 into an error the client would take for "not stored".
    // What stays behind is swept later (stale staging; the bucket's lifecycle rule).
    await this.deps.blobs.discard(staged).catch((err: unknown) => {
      this.deps.log.warn({ err: String(err) }, 'staged upload not removed; the sweeper removes it later');
    });
    return result;
  }

  private async commit(
    caller: Caller,
    req: UploadRequest,
    staged: StagedBlob,
    idempotencyKey: string | undefined,
  ): Promise<UploadResult> {
    const { tenantStore, artifactStore, blobs, clock, origins } = this.deps;
    // The bytes may have taken long to arrive; storage freed by expiry meanwhile counts.
    await settleExpiry(this.deps, caller.tenant.id);
    const now = clock.now();
    const tenant = (await tenantStore.getTenant(caller.tenant.id)) ?? caller.tenant;
    const row = this.buildRow(tenant.id, tenant.plan, req, staged, now);
    const limit = PLANS[tenant.plan].storageBytes;
    // A session field that came after the file part was not prechecked: refuse before the bytes land.
    await this.refuseSealed(tenant.id, row.sessionId);

    if (tenant.storageBytes + staged.sizeBytes > limit && !(await artifactStore.blobIsLive(tenant.id, staged.sha256))) {
      throw this.storageFull(tenant.plan);
    }
    const write = await this.pin(tenant.id, staged);
    // The insert of the active row ends the write; anything else (a refusal, a replay) gives it back.
    let written = false;
    try {
      await blobs.commit(staged, blobKey(tenant.id, staged.sha256));
      const response: IdempotentResponse = { status: 201, body: JSON.stringify(artifactRecord(row, null, origins)) };
      const result = await artifactStore.insertArtifact({
        artifact: row,
        storageLimitBytes: limit,
        ...(idempotencyKey === undefined
          ? {}
          : { idempotency: { key: idempotencyKey, notBefore: now - LIMITS.idempotencySeconds * 1000, response } }),
      });
      if (result.kind === 'replay') return { ...result.response, replayed: true };
      written = true;
      this.deps.observer?.uploadStored(staged.sizeBytes);
      return { ...response, replayed: false };
    } finally {
      if (!written) await this.endWrite(write);
    }
  }

  private buildRow(tenantId: string, plan: PlanName, req: UploadRequest, staged: StagedBlob, now: number): ArtifactRow {
    return buildArtifactRow(
      tenantId,
      plan,
      req,
      { sizeBytes: staged.sizeBytes, sha256: staged.sha256 },
      now,
      this.deps.upgradeUrl,
    );
  }

  /**
   * Pins the blob against the sweeper, and takes the write of its bytes unless they are stored
   * already: only then may `blobs.commit` put them in place, so bytes once stored are never
   * written again, whichever instance stores the same bytes at the same moment. Waits out
   * another upload writing them (then finds them stored, or the write given back) and a delete
   * claim in progress. Returns the write taken, for `endWrite`, or null when the bytes are stored.
   */
  async pin(tenantId: string, staged: StagedBlob): Promise<BlobWrite | null> {
    const owner = randomBytes(12).toString('hex');
    let state: BlobPin = 'writing';
    for (let attempt = 0; attempt < this.pinWait.attempts; attempt++) {
      const now = this.deps.clock.now();
      state = await this.deps.artifactStore.pinBlob(tenantId, staged.sha256, staged.sizeBytes, now, {
        owner,
        until: now + WRITE_CLAIM_MS,
      });
      if (state === 'stored') return null;
      if (state === 'write') return { tenantId, contentHash: staged.sha256, owner };
      await sleep(this.pinWait.delayMs);
    }
    if (state === 'writing') {
      throw unavailable(
        `The same content is being stored by another upload right now; retry in ${WRITE_RETRY_AFTER_SECONDS} s.`,
        WRITE_RETRY_AFTER_SECONDS,
      );
    }
    throw unavailable(
      `Storage is busy cleaning up this content; retry in ${PIN_RETRY_AFTER_SECONDS} s.`,
      PIN_RETRY_AFTER_SECONDS,
    );
  }

  /** Gives a write back once its upload no longer needs it (best effort: it lapses by itself). */
  async endWrite(write: BlobWrite | null): Promise<void> {
    if (!write) return;
    await this.deps.artifactStore
      .releaseBlobWrite(write.tenantId, write.contentHash, write.owner)
      .catch((err: unknown) => {
        this.deps.log.warn({ err: String(err) }, 'could not give back a blob write; it lapses by itself');
      });
  }

  storageFull(plan: PlanName) {
    return new CairnError(
      'quota_exceeded',
      `Storage quota of the ${plan} plan (${PLANS[plan].storageBytes} bytes) would be exceeded.`,
      { upgradeUrl: this.deps.upgradeUrl },
    );
  }
}

/** How `createPending` is told what differs between presigned and resumable uploads. */
export interface PendingOptions {
  /** The declared size in bytes, checked against what the plan allows (throws when it is not). */
  sizeFor(plan: PlanName): number;
  /** The (namespaced) Idempotency-Key and the response a repeat of it replays. */
  idempotency?: { key: string; response(row: ArtifactRow): IdempotentResponse };
  /** Reserves what the upload needs beside its row, before the insert; returns how to undo it. */
  reserve?(row: ArtifactRow, plan: PlanName): Promise<() => Promise<unknown>>;
}

export type PendingResult = { kind: 'created'; row: ArtifactRow } | { kind: 'replay'; response: IdempotentResponse };

export const sealed = (session: string) =>
  new CairnError('session_sealed', `Session ${session} is sealed; it accepts no more uploads.`);

/**
 * Validates upload fields into an artifact row: filename, labels, metadata (with the transcript
 * convention), content type resolution and TTL. Shared by direct and presigned uploads.
 */
export function buildArtifactRow(
  tenantId: string,
  plan: PlanName,
  req: UploadRequest,
  content: { sizeBytes: number; sha256: string },
  now: number,
  upgradeUrl: string,
  status: ArtifactRow['status'] = 'active',
): ArtifactRow {
  const filename = checkFilename(req.filename);
  const transcript = parseBooleanFlag(req.transcript, 'transcript');
  const metadata = { ...checkMetadata(req.metadata) };
  if (transcript && metadata.type === undefined) metadata.type = 'transcript';
  const declared = checkContentType(req.contentType) ?? (transcript ? 'application/x-ndjson' : undefined);
  return {
    id: newArtifactId(),
    tenantId,
    filename,
    contentType: resolveContentType(filename, declared, req.partType),
    sizeBytes: content.sizeBytes,
    contentHash: content.sha256,
    metadata: checkMetadata(metadata),
    sessionId: optionalLabel(req.sessionId, 'session_id'),
    agentId: optionalLabel(req.agentId, 'agent_id'),
    createdAt: now,
    expiresAt: expiresAtFor(req.ttl, plan, now, upgradeUrl),
    deletedAt: null,
    status,
  };
}
