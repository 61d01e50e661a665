import { randomBytes } from 'node:crypto';
import { CLAIM_WORK_MS, ORPHAN_GRACE_MS, STALE_CLAIM_MS } from './blob-claims.js';
import type { CoreDeps } from './context.js';
import { blobKey } from './context.js';
import { DEFAULT_EVENT_RETENTION_SECONDS } from './events.js';
import { MCP_SESSION_IDLE_MS } from './mcp-sessions.js';
import { PeriodicJob } from './periodic-job.js';
import { LIMITS } from './plans.js';
import { PENDING_RETENTION_MS } from './presigned.js';

export interface SweepReport {
  expired: number;
  purged: number;
  orphansMarked: number;
  blobsDeleted: number;
  idempotencyPurged: number;
  linksPurged: number;
  pendingPurged: number;
  /** Resumable uploads past their expiry, removed with their pieces. */
  resumablesPurged: number;
  /** Objects that presigned uploads left in object storage and no one completed in time. */
  landingsSwept: number;
  /** Staging left on the local disk by processes that stopped (a crash) after this one started. */
  stagingSwept: number;
  /** Events older than their retention (7 days by default). */
  eventsPurged: number;
  /** Webhook delivery log rows older than the events' retention. */
  deliveriesPurged: number;
  /** Hosted MCP sessions idle past their lifetime, with their subscriptions. */
  mcpSessionsPurged: number;
}

export { CLAIM_WORK_MS, ORPHAN_GRACE_MS, STALE_CLAIM_MS };

/** The ports and settings this service uses, of CoreDeps. */
export type SweeperDeps = Pick<
  CoreDeps,
  | 'artifactStore'
  | 'sweeperStore'
  | 'eventStore'
  | 'webhookStore'
  | 'mcpSessionStore'
  | 'eventRetentionMs'
  | 'resumables'
  | 'blobs'
  | 'clock'
  | 'log'
  | 'observer'
>;

/**
 * The background sweeper. Every step is a bounded batch in its own transaction, and every step
 * is idempotent, so several instances may run at once and a sweeper killed half-way leaves work
 * the next run simply finishes.
 */
export class Sweeper {
  constructor(
    private readonly deps: SweeperDeps,
    private readonly batch = 500,
    /** Upper bound on batches per step per run, so one run never monopolises the store. */
    private readonly maxBatches = 200,
  ) {}

  async runOnce(): Promise<SweepReport> {
    const { sweeperStore, artifactStore, blobs, clock } = this.deps;
    const now = clock.now();
    const retention = LIMITS.softDeleteRetentionSeconds * 1000;
    const eventRetention = this.deps.eventRetentionMs ?? DEFAULT_EVENT_RETENTION_SECONDS * 1000;
    const report: SweepReport = {
      expired: await this.drain((n) => artifactStore.expireArtifacts(now, n)),
      purged: await this.drain((n) => sweeperStore.purgeArtifacts(now - retention, now - retention, n, now)),
      // Before the orphan mark, so the bytes of an abandoned upload start their grace period now.
      pendingPurged: await this.drain((n) => sweeperStore.purgePendingUploads(now - PENDING_RETENTION_MS, n)),
      resumablesPurged: await this.drain((n) => this.purgeResumables(now, n)),
      orphansMarked: await this.drain((n) => sweeperStore.markOrphanBlobs(now, n)),
      blobsDeleted: 0,
      idempotencyPurged: await this.drain((n) =>
        sweeperStore.purgeIdempotency(now - LIMITS.idempotencySeconds * 1000, n),
      ),
      // A revoked link is kept for a day, so that revoking it again answers its owner the same.
      linksPurged: await this.drain((n) =>
        sweeperStore.purgeDeadLinks(now, now - LIMITS.revokedLinkRetentionSeconds * 1000, n),
      ),
      // Landed at or after its pending row was created, so older than the retention means
      // abandoned (a completed upload drops its own; this also catches a drop that failed). The
      // pieces of resumable uploads are landings too, and expire with the same retention.
      landingsSwept: await blobs.sweepLandings(now - PENDING_RETENTION_MS),
      stagingSwept: blobs.sweepStaging ? await blobs.sweepStaging() : 0,
      eventsPurged: await this.drain((n) => this.deps.eventStore.purgeEvents(now - eventRetention, n)),
      deliveriesPurged: await this.drain((n) => this.deps.webhookStore.purgeDeliveries(now - eventRetention, n)),
      mcpSessionsPurged: await this.drain((n) =>
        this.deps.mcpSessionStore.purgeMcpSessions(now - MCP_SESSION_IDLE_MS, n),
      ),
    };
    for (let i = 0; i < this.maxBatches; i++) {
      const claimedAt = clock.now();
      const claimed = await sweeperStore.claimOrphanBlobs(
        now - ORPHAN_GRACE_MS,
        claimedAt - STALE_CLAIM_MS,
        claimedAt,
        this.batch,
      );
      for (const ref of claimed) {
        // Past this, another sweeper could soon take the claim over, finish, and let an upload
        // store the bytes again, which a late delete here would then destroy. The blobs left
        // claimed are finished by a later run once the claim is stale.
        if (clock.now() - ref.claimedAt > CLAIM_WORK_MS) return report;
        // Bytes first, row second: a crash in between leaves a claimed row that a later run finishes.
        await blobs.delete(blobKey(ref.tenantId, ref.contentHash));
        await sweeperStore.forgetBlob(ref);
        report.blobsDeleted++;
      }
      if (claimed.length < this.batch) break;
    }
    return report;
  }

  /**
   * Expired resumable uploads: claimed (so that sweepers running at once split them), then their
   * pieces dropped, then their row (a crash in between repeats the drops once the claim lapses).
   * Only the rows this run removed count.
   */
  private async purgeResumables(now: number, batch: number): Promise<number> {
    const { resumables, blobs } = this.deps;
    const owner = `sweeper-${randomBytes(12).toString('hex')}`;
    const expired = await resumables.claimExpiredResumables(owner, now, now + STALE_CLAIM_MS, batch);
    let removed = 0;
    for (const row of expired) {
      try {
        for (const piece of row.segments) await blobs.dropLanded(piece.landingKey);
        if (await resumables.deleteResumable(row.tenantId, row.id)) removed++;
      } catch (err) {
        // One upload the blob store cannot clean now is left for the next run; the others go on.
        this.deps.log.warn({ err: String(err), uploadId: row.id }, 'could not remove an expired upload yet');
      }
    }
    // Fewer than a batch (any failure makes it so) ends this run's drain: the rest wait for the next.
    return removed;
  }

  private async drain(step: (batch: number) => Promise<number>): Promise<number> {
    let total = 0;
    for (let i = 0; i < this.maxBatches; i++) {
      const n = await step(this.batch);
      total += n;
      if (n < this.batch) break;
    }
    return total;
  }

  /** Sweeps every `intervalMs` in the background (server.ts), each run reported to the observer. */
  private readonly job = new PeriodicJob(async () => {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      // Run first: `observer?.sweepFinished(await …)` would skip the run itself without an observer.
      const report = await this.runOnce();
      this.deps.observer?.sweepFinished(report, seconds());
    } catch (err) {
      this.deps.log.error({ err }, 'sweeper run failed');
      this.deps.observer?.sweepFinished(null, seconds());
    }
  });

  start(intervalMs: number): void {
    this.job.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.job.stop();
  }
}
