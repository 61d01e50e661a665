import type { EventQuery, EventRow, EventStore } from '../ports/event-store.js';
import type { ArtifactRow, LinkRow, PageRow, SessionLinkRow, SessionRow } from '../ports/metadata-records.js';
import { EVENT_TYPES, type EventType, eventId, eventSeq, isEventType } from '../shared/event-types.js';
import type { EventList, EventRecord, PageState, WebhookDisabled } from '../wire/events.js';
import type { LinkRecord } from '../wire/sharing.js';
import type { Origins } from './context.js';
import { invalid } from './errors.js';
import { parseLimit, type RawQuery } from './list-query.js';
import { artifactRecord, publicPageUrl, sessionLinkRecord, sessionRecord } from './records.js';
import type { Caller } from './tenants.js';
import { toIso } from './time.js';
import { checkLabel } from './validation.js';

/** Events are kept this long by default (CAIRN_EVENT_RETENTION_SECONDS). */
export const DEFAULT_EVENT_RETENTION_SECONDS = 7 * 86_400;

/** What a reader of the feed asks for: the position after which to start, and the filters. */
export interface EventFilter {
  after: number;
  types?: EventType[];
  sessionId?: string;
}

const EVENT_FILTERS = new Set(['after', 'cursor', 'limit', 'types', 'session_id']);

function single(query: RawQuery, key: string): string | undefined {
  const v = query[key];
  if (Array.isArray(v)) throw invalid(`${key} may be given once.`);
  return v;
}

/** `after` (or `cursor`): an event id, or 0 for the start of what is kept. */
export function parsePosition(value: string | undefined, field = 'after'): number {
  if (value === undefined || value === '' || value === '0') return 0;
  const seq = eventSeq(value);
  if (seq === null)
    throw invalid(`${field} must be an event id (evt_ and 16 digits), as event_id or next_cursor gave it.`);
  return seq;
}

/** `types=artifact.created,session.sealed`: each a known type, or a prefix such as `artifact.*`. */
export function parseTypes(value: string | undefined): EventType[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const out = new Set<EventType>();
  for (const raw of value.split(',')) {
    const t = raw.trim();
    if (t.endsWith('.*')) {
      const prefix = t.slice(0, -1);
      const matched = EVENT_TYPES.filter((k) => k.startsWith(prefix));
      if (matched.length === 0) throw unknownType(t);
      for (const k of matched) out.add(k);
    } else if (isEventType(t)) out.add(t);
    else throw unknownType(t);
  }
  return [...out];
}

const unknownType = (t: string) =>
  invalid(
    `'${t.slice(0, 80)}' is not an event type; the types are ${EVENT_TYPES.join(', ')} (or a prefix like artifact.*).`,
  );

/** The query string of GET /v1/events (and the stream's): anything unknown is refused. */
export function parseEventQuery(query: RawQuery): { filter: EventFilter; limit: number } {
  for (const key of Object.keys(query)) {
    if (!EVENT_FILTERS.has(key)) throw invalid(`Unknown query parameter '${key.slice(0, 80)}'.`);
  }
  const limit = parseLimit(single(query, 'limit'));
  const after = single(query, 'after');
  const cursor = single(query, 'cursor');
  if (after !== undefined && cursor !== undefined) throw invalid('Give after or cursor, not both.');
  const filter: EventFilter = { after: parsePosition(after ?? cursor, after !== undefined ? 'after' : 'cursor') };
  const types = parseTypes(single(query, 'types'));
  if (types) filter.types = types;
  const session = single(query, 'session_id');
  if (session !== undefined) filter.sessionId = checkLabel(session, 'session_id');
  return { filter, limit };
}

function pageState(p: PageRow, origins: Origins): PageState {
  return {
    page_id: p.slug,
    artifact_id: p.artifactId,
    public_url: publicPageUrl(origins, p.slug),
    visibility: p.visibility,
    access: p.access,
    title: p.title,
    live: p.live,
    taken_down: p.takenDownAt !== null,
  };
}

function linkRecord(l: LinkRow, origins: Origins): LinkRecord {
  return {
    link_id: l.id,
    url: `${origins.download}/${l.id}`,
    artifact_id: l.artifactId,
    expires_at: toIso(l.expiresAt),
    created_at: toIso(l.createdAt),
  };
}

/** An event row as the API shows it: its subject rendered as the record the API returns for it. */
export function eventRecord(row: EventRow, origins: Origins): EventRecord {
  const s = row.subject;
  let data: EventRecord['data'];
  if (row.type.startsWith('artifact.')) data = artifactRecord(s as unknown as ArtifactRow, null, origins);
  else if (row.type.startsWith('session.')) data = sessionRecord(s as unknown as SessionRow);
  else if (row.type.startsWith('page.')) data = pageState(s as unknown as PageRow, origins);
  else if (row.type.startsWith('link.')) data = linkRecord(s as unknown as LinkRow, origins);
  else if (row.type.startsWith('session_link.')) {
    const l = s as unknown as SessionLinkRow;
    data = { ...sessionLinkRecord(l, origins), session_id: l.sessionId };
  } else data = s as unknown as WebhookDisabled;
  return { event_id: eventId(row.seq), type: row.type, created_at: toIso(row.createdAt), data };
}

export interface EventServiceDeps {
  eventStore: EventStore;
  origins: Origins;
}

/** The change feed as a list: `GET /v1/events`. The stream and webhooks read through `read`. */
export class EventService {
  constructor(private readonly deps: EventServiceDeps) {}

  async list(caller: Caller, raw: RawQuery): Promise<EventList> {
    const { filter, limit } = parseEventQuery(raw);
    const rows = await this.read(caller.tenant.id, filter, limit + 1);
    const shown = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    const last = shown.at(-1);
    return {
      events: shown.map((r) => eventRecord(r, this.deps.origins)),
      next_cursor: hasMore && last ? eventId(last.seq) : null,
      has_more: hasMore,
    };
  }

  /** The tenant's events after `filter.after` that match it, oldest first, at most `limit`. */
  read(tenantId: string, filter: EventFilter, limit: number): Promise<EventRow[]> {
    const q: EventQuery = { after: filter.after, limit };
    if (filter.types) q.types = filter.types;
    if (filter.sessionId !== undefined) q.sessionId = filter.sessionId;
    return this.deps.eventStore.listEvents(tenantId, q);
  }

  /** The position of the tenant's last event (0: none yet): where a stream opened without Last-Event-ID starts. */
  async head(tenantId: string): Promise<number> {
    return (await this.deps.eventStore.latestSeqs([tenantId])).get(tenantId) ?? 0;
  }

  render(row: EventRow): EventRecord {
    return eventRecord(row, this.deps.origins);
  }
}
