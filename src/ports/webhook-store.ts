import type { EventType } from '../shared/event-types.js';

/**
 * Webhook endpoints and their deliveries. Each endpoint keeps its position in its tenant's event
 * feed (`cursorSeq`: every event up to it was delivered or did not match), so it is delivered to
 * in order and the writes of a change stay as they were. An instance delivers to an endpoint only
 * under a lease it claimed (`claimWebhooks`); every write of a delivery names the lease owner and
 * changes nothing once another holds it, so of any number of instances one delivers each event.
 */
export interface WebhookRow {
  id: string;
  tenantId: string;
  url: string;
  /** null: every type. */
  types: EventType[] | null;
  sessionId: string | null;
  secret: string;
  /** The secret before the last rotation, still signed with until `previousUntil`. */
  previousSecret: string | null;
  previousUntil: number | null;
  status: 'active' | 'disabled';
  createdAt: number;
  cursorSeq: number;
  /** Failed attempts at the event after cursorSeq. */
  attempts: number;
  /** When the current run of failures began (null: the last attempt succeeded). */
  failingSince: number | null;
  nextAttemptAt: number;
  disabledAt: number | null;
  leaseOwner: string | null;
  leaseUntil: number | null;
}

export interface DeliveryRow {
  id: string;
  webhookId: string;
  tenantId: string;
  eventSeq: number;
  eventType: EventType;
  attempt: number;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  createdAt: number;
}

/** What one attempt came to, recorded by `recordAttempt` under the lease. */
export interface AttemptRecord {
  delivery: DeliveryRow;
  owner: string;
  /** Delivered: the cursor moves to the event. Failed: `nextAttemptAt` when to try again. */
  nextAttemptAt: number;
  /** Failed for too long: the endpoint is disabled, and this event (`webhook.disabled`) recorded. */
  disable?: { at: number; subject: Record<string, unknown> };
}

export interface WebhookStore {
  /**
   * Creates the endpoint unless its tenant has `max` already, positioned at the tenant's feed
   * head (it gets the events after its creation). Check and insert are one step under the
   * tenant's lock, as for links.
   */
  createWebhook(row: Omit<WebhookRow, 'cursorSeq'>, max: number): Promise<WebhookRow | null>;
  getWebhook(tenantId: string, id: string): Promise<WebhookRow | null>;
  /** The tenant's endpoints, oldest first, after `after` ([createdAt, id]). */
  listWebhooks(tenantId: string, limit: number, after?: [number, string]): Promise<WebhookRow[]>;
  /** Deletes the endpoint and its delivery log; false when the tenant has no such endpoint. */
  deleteWebhook(tenantId: string, id: string): Promise<boolean>;
  /** A new secret; the old one is still signed with until `previousUntil`. Null when unknown. */
  rotateWebhookSecret(tenantId: string, id: string, secret: string, previousUntil: number): Promise<WebhookRow | null>;
  /** Active again from where it stopped (the events after its cursor, still kept). */
  enableWebhook(tenantId: string, id: string, now: number): Promise<WebhookRow | null>;

  /**
   * Leases up to `batch` active endpoints that are due at `now`, not leased by anyone (or whose
   * lease lapsed) and behind their tenant's feed head, to `owner` until `until`. Concurrent
   * claims, on any number of instances, never lease one endpoint twice.
   */
  claimWebhooks(owner: string, now: number, until: number, batch: number): Promise<WebhookRow[]>;
  /** Extends `owner`'s lease; false when it no longer holds it. */
  renewWebhookLease(id: string, owner: string, until: number): Promise<boolean>;
  /** Moves the cursor past events that do not match (up to `seq`), under the lease. */
  skipWebhookTo(id: string, owner: string, seq: number): Promise<boolean>;
  /** Logs the attempt and moves the endpoint on, in one transaction, under the lease; false (nothing written) when lost. */
  recordAttempt(record: AttemptRecord): Promise<boolean>;
  /** Gives the lease back. */
  releaseWebhook(id: string, owner: string): Promise<void>;

  /** The endpoint's attempts, newest first, after `after` ([createdAt, id]). */
  listDeliveries(tenantId: string, webhookId: string, limit: number, after?: [number, string]): Promise<DeliveryRow[]>;
  /** Drops log rows created before `before`, at most `batch`. */
  purgeDeliveries(before: number, batch: number): Promise<number>;
}
