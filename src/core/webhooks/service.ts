import type { Clock } from '../../ports/clock.js';
import type { WebhookRow, WebhookStore } from '../../ports/webhook-store.js';
import { EVENT_TYPES, type EventType, eventId, isEventType } from '../../shared/event-types.js';
import { isPrivateAddress } from '../../shared/private-address.js';
import type {
  DeleteWebhookResult,
  DeliveryList,
  WebhookCreated,
  WebhookList,
  WebhookRecord,
  WebhookSecret,
} from '../../wire/webhooks.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { CairnError, invalid } from '../errors.js';
import { randomAlnum } from '../ids.js';
import { parseLimit, type RawQuery } from '../list-query.js';
import { PLANS } from '../plans.js';
import type { Caller } from '../tenants.js';
import { toIso, toIsoOrNull } from '../time.js';
import { checkLabel } from '../validation.js';
import { newWebhookSecret } from './signing.js';

export const WEBHOOK_ID = /^wh_[A-Za-z0-9]{16}$/;
const DELIVERY_ID = /^whd_[A-Za-z0-9]{16}$/;
/** After a rotation the old secret keeps signing this long, so receivers can switch without a gap. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export interface WebhookServiceDeps {
  webhookStore: WebhookStore;
  clock: Clock;
  upgradeUrl: string;
  /** The operator allows private, loopback and link-local destinations (development, tests). */
  webhookAllowPrivate?: boolean;
}

export function webhookRecord(w: WebhookRow): WebhookRecord {
  return {
    webhook_id: w.id,
    url: w.url,
    types: w.types,
    session_id: w.sessionId,
    status: w.status,
    created_at: toIso(w.createdAt),
    disabled_at: toIsoOrNull(w.disabledAt),
    failing_since: toIsoOrNull(w.failingSince),
    last_event_id: w.cursorSeq > 0 ? eventId(w.cursorSeq) : null,
  };
}

const notFound = (id: string) =>
  new CairnError('not_found', `Webhook ${id.slice(0, 40)} not found in this account. List them: GET /v1/webhooks.`);

/** Webhook endpoints as the API manages them (the deliveries themselves: WebhookDeliverer). */
export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /** The URL a webhook may have: http(s), no credentials, and no private address spelled in it. */
  checkUrl(raw: unknown): string {
    if (typeof raw !== 'string' || raw.length === 0 || raw.length > 2048)
      throw invalid('url must be a URL of at most 2048 characters.');
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw invalid('url must be an absolute http or https URL, e.g. https://example.com/hooks/cairn.');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url must be http or https.');
    if (url.username || url.password)
      throw invalid('url must not carry credentials; verify deliveries by their signature.');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const local = host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal');
    const literal = /^[\d.]+$/.test(host) || host.includes(':');
    if (!this.deps.webhookAllowPrivate && (local || (literal && isPrivateAddress(host)))) {
      throw invalid(
        'url points at a private, loopback or link-local address; webhooks deliver to public addresses only.',
      );
    }
    return url.toString();
  }

  async create(
    caller: Caller,
    body: { url?: unknown; types?: unknown; session_id?: unknown },
  ): Promise<WebhookCreated> {
    const url = this.checkUrl(body.url);
    const types = parseTypeList(body.types);
    const sessionId =
      body.session_id === undefined || body.session_id === null ? null : checkLabel(body.session_id, 'session_id');
    const now = this.deps.clock.now();
    const max = PLANS[caller.tenant.plan].webhooks;
    const row = await this.deps.webhookStore.createWebhook(
      {
        id: `wh_${randomAlnum(16)}`,
        tenantId: caller.tenant.id,
        url,
        types,
        sessionId,
        secret: newWebhookSecret(),
        previousSecret: null,
        previousUntil: null,
        status: 'active',
        createdAt: now,
        attempts: 0,
        failingSince: null,
        nextAttemptAt: now,
        disabledAt: null,
        leaseOwner: null,
        leaseUntil: null,
      },
      max,
    );
    if (!row) {
      throw new CairnError('quota_exceeded', `This plan allows ${max} webhooks; delete one first.`, {
        upgradeUrl: this.deps.upgradeUrl,
      });
    }
    return { ...webhookRecord(row), secret: row.secret };
  }

  async list(caller: Caller, raw: RawQuery): Promise<WebhookList> {
    for (const key of Object.keys(raw)) {
      if (key !== 'cursor' && key !== 'limit') throw invalid(`Unknown query parameter '${key.slice(0, 80)}'.`);
    }
    const limit = parseLimit(single(raw, 'limit'));
    const cursor = single(raw, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor(cursor, WEBHOOK_ID);
    const rows = await this.deps.webhookStore.listWebhooks(caller.tenant.id, limit + 1, after);
    const shown = rows.slice(0, limit);
    const last = shown.at(-1);
    const hasMore = rows.length > limit && last !== undefined;
    return {
      webhooks: shown.map(webhookRecord),
      next_cursor: hasMore ? encodeCursor([last.createdAt, last.id]) : null,
      has_more: hasMore,
    };
  }

  async get(caller: Caller, id: string): Promise<WebhookRecord> {
    return webhookRecord(await this.own(caller, id));
  }

  async delete(caller: Caller, id: string): Promise<DeleteWebhookResult> {
    if (!WEBHOOK_ID.test(id) || !(await this.deps.webhookStore.deleteWebhook(caller.tenant.id, id))) throw notFound(id);
    return { webhook_id: id, deleted: true };
  }

  async rotateSecret(caller: Caller, id: string): Promise<WebhookSecret> {
    if (!WEBHOOK_ID.test(id)) throw notFound(id);
    const secret = newWebhookSecret();
    const until = this.deps.clock.now() + ROTATION_OVERLAP_MS;
    const row = await this.deps.webhookStore.rotateWebhookSecret(caller.tenant.id, id, secret, until);
    if (!row) throw notFound(id);
    return { webhook_id: id, secret };
  }

  async enable(caller: Caller, id: string): Promise<WebhookRecord> {
    if (!WEBHOOK_ID.test(id)) throw notFound(id);
    const row = await this.deps.webhookStore.enableWebhook(caller.tenant.id, id, this.deps.clock.now());
    if (!row) throw notFound(id);
    return webhookRecord(row);
  }

  async deliveries(caller: Caller, id: string, raw: RawQuery): Promise<DeliveryList> {
    await this.own(caller, id);
    for (const key of Object.keys(raw)) {
      if (key !== 'cursor' && key !== 'limit') throw invalid(`Unknown query parameter '${key.slice(0, 80)}'.`);
    }
    const limit = parseLimit(single(raw, 'limit'));
    const cursor = single(raw, 'cursor');
    const after = cursor === undefined ? undefined : decodeCursor(cursor, DELIVERY_ID);
    const rows = await this.deps.webhookStore.listDeliveries(caller.tenant.id, id, limit + 1, after);
    const shown = rows.slice(0, limit);
    const last = shown.at(-1);
    const hasMore = rows.length > limit && last !== undefined;
    return {
      deliveries: shown.map((d) => ({
        delivery_id: d.id,
        event_id: eventId(d.eventSeq),
        event_type: d.eventType,
        attempt: d.attempt,
        delivered: d.delivered,
        status_code: d.statusCode,
        error: d.error,
        duration_ms: d.durationMs,
        created_at: toIso(d.createdAt),
      })),
      next_cursor: hasMore ? encodeCursor([last.createdAt, last.id]) : null,
      has_more: hasMore,
    };
  }

  private async own(caller: Caller, id: string): Promise<WebhookRow> {
    const row = WEBHOOK_ID.test(id) ? await this.deps.webhookStore.getWebhook(caller.tenant.id, id) : null;
    if (!row) throw notFound(id);
    return row;
  }
}

export const newDeliveryId = () => `whd_${randomAlnum(16)}`;

function single(query: RawQuery, key: string): string | undefined {
  const v = query[key];
  if (Array.isArray(v)) throw invalid(`${key} may be given once.`);
  return v;
}

function parseTypeList(raw: unknown): EventType[] | null {
  if (raw === undefined || raw === null) return null;
  if (!Array.isArray(raw) || raw.length === 0)
    throw invalid(`types must be a non-empty list of ${EVENT_TYPES.join(', ')}.`);
  const out = new Set<EventType>();
  for (const t of raw) {
    if (typeof t !== 'string' || !isEventType(t)) throw invalid(`'${String(t).slice(0, 80)}' is not an event type.`);
    out.add(t);
  }
  return [...out];
}
