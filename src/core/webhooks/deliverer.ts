import { randomBytes } from 'node:crypto';
import type { Clock } from '../../ports/clock.js';
import type { EventRow, EventStore } from '../../ports/event-store.js';
import type { WebhookSender } from '../../ports/webhook-sender.js';
import type { WebhookRow, WebhookStore } from '../../ports/webhook-store.js';
import { eventId } from '../../shared/event-types.js';
import type { Logger, Origins } from '../context.js';
import { eventRecord } from '../events.js';
import { PeriodicJob } from '../periodic-job.js';
import { toIso } from '../time.js';
import { newDeliveryId } from './service.js';
import { webhookHeaders } from './signing.js';

/** A failing endpoint is retried for this long (from its first failure), then disabled. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 3_600_000;
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 3_600_000;

/** The wait after the n-th failed attempt at one event: 5 s, 10 s, 20 s, … doubling up to an hour. */
export function retryDelayMs(attempt: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempt - 1));
}

export interface DelivererDeps {
  webhookStore: WebhookStore;
  eventStore: EventStore;
  sender: WebhookSender;
  clock: Clock;
  origins: Origins;
  log: Logger;
}

export interface DelivererOptions {
  /** A delivery attempt's bound (the sender's timeout); the lease outlasts it. */
  timeoutMs: number;
  /** Endpoints claimed per run. */
  batch?: number;
  /** Events delivered to one endpoint per claim, before it goes back to the pool. */
  perClaim?: number;
}

/**
 * Delivers events to webhook endpoints, on every instance at once: each run claims the endpoints
 * that are due and behind their feed (a lease, claimed with SKIP LOCKED), and for each sends the
 * events after its cursor in order, one at a time; a success moves the cursor, a failure waits
 * (5 s doubling to 1 h) and keeps the cursor, so the next attempt, here or on another instance,
 * sends the same event again. A failure 24 h after the first one of a run disables the endpoint
 * and records `webhook.disabled`. Only the lease holder's writes count (recordAttempt), so one
 * instance delivers each event; a holder that dies mid-delivery loses its lease and the event is
 * sent again by whoever claims next (at least once, in order).
 */
export class WebhookDeliverer {
  readonly owner = `deliverer-${randomBytes(9).toString('base64url')}`;
  private readonly leaseMs: number;

  constructor(
    private readonly deps: DelivererDeps,
    private readonly opts: DelivererOptions,
  ) {
    this.leaseMs = opts.timeoutMs * 2 + 5_000;
  }

  /** One run: claims what is due and delivers; how many attempts it made. */
  async runOnce(): Promise<number> {
    const now = this.deps.clock.now();
    const claimed = await this.deps.webhookStore.claimWebhooks(
      this.owner,
      now,
      now + this.leaseMs,
      this.opts.batch ?? 20,
    );
    const counts = await Promise.all(claimed.map((hook) => this.serve(hook)));
    return counts.reduce((a, b) => a + b, 0);
  }

  private async serve(start: WebhookRow): Promise<number> {
    const { webhookStore, eventStore } = this.deps;
    let hook = start;
    let attempts = 0;
    try {
      for (let i = 0; i < (this.opts.perClaim ?? 50); i++) {
        const head = (await eventStore.latestSeqs([hook.tenantId])).get(hook.tenantId) ?? 0;
        const [next] = await eventStore.listEvents(hook.tenantId, {
          after: hook.cursorSeq,
          limit: 1,
          ...(hook.types ? { types: hook.types } : {}),
          ...(hook.sessionId !== null ? { sessionId: hook.sessionId } : {}),
        });
        if (!next) {
          // Nothing after the cursor matches up to the head: pass over the rest for good.
          if (head > hook.cursorSeq) await webhookStore.skipWebhookTo(hook.id, this.owner, head);
          return attempts;
        }
        const now = this.deps.clock.now();
        if (!(await webhookStore.renewWebhookLease(hook.id, this.owner, now + this.leaseMs))) return attempts;
        const outcome = await this.attempt(hook, next);
        attempts++;
        if (!outcome) return attempts;
        hook = outcome;
        if (hook.attempts > 0) return attempts;
      }
      return attempts;
    } catch (err) {
      this.deps.log.warn({ err: String(err), webhookId: hook.id }, 'webhook delivery interrupted; will retry');
      return attempts;
    } finally {
      await webhookStore.releaseWebhook(hook.id, this.owner).catch(() => {});
    }
  }

  /** Sends one event and records it; the endpoint as it now is, or null when the lease was lost. */
  private async attempt(hook: WebhookRow, event: EventRow): Promise<WebhookRow | null> {
    const { sender, clock, webhookStore, origins } = this.deps;
    const body = JSON.stringify(eventRecord(event, origins));
    const sentAt = clock.now();
    const secrets = [hook.secret];
    if (hook.previousSecret && hook.previousUntil !== null && hook.previousUntil > sentAt)
      secrets.push(hook.previousSecret);
    const id = `${hook.id}_${eventId(event.seq)}`;
    const outcome = await sender.send(hook.url, webhookHeaders(secrets, id, Math.floor(sentAt / 1000), body), body);
    const now = clock.now();
    const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const attempt = hook.attempts + 1;
    const failingSince = delivered ? null : (hook.failingSince ?? now);
    const giveUp = !delivered && now - (failingSince ?? now) >= WEBHOOK_RETRY_WINDOW_MS;
    const recorded = await webhookStore.recordAttempt({
      owner: this.owner,
      delivery: {
        id: newDeliveryId(),
        webhookId: hook.id,
        tenantId: hook.tenantId,
        eventSeq: event.seq,
        eventType: event.type,
        attempt,
        delivered,
        statusCode: outcome.status,
        error: outcome.error,
        durationMs: outcome.durationMs,
        createdAt: now,
      },
      nextAttemptAt: delivered ? now : now + retryDelayMs(attempt),
      ...(giveUp
        ? {
            disable: {
              at: now,
              subject: {
                webhook_id: hook.id,
                url: hook.url,
                disabled_at: toIso(now),
                reason: `Deliveries failed for 24 hours (last: ${outcome.error ?? 'no answer'}).`,
              },
            },
          }
        : {}),
    });
    if (!recorded) return null;
    return delivered
      ? { ...hook, cursorSeq: event.seq, attempts: 0, failingSince: null }
      : { ...hook, attempts: attempt, failingSince };
  }

  /** Claims and delivers every `intervalMs` in the background. */
  private readonly job = new PeriodicJob(() =>
    this.runOnce().catch((err: unknown) => {
      this.deps.log.warn({ err: String(err) }, 'webhook deliveries not claimed; will retry');
    }),
  );

  start(intervalMs: number): void {
    this.job.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.job.stop();
  }
}
