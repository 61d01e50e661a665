/**
 * The kinds of event the change feed records (GET /v1/events, the stream, webhooks). Shared by
 * the server and the client side (the CLI's `cairn watch --types`), so it imports nothing.
 */
export const EVENT_TYPES = [
  'artifact.created',
  'artifact.deleted',
  'artifact.expired',
  'artifact.purged',
  'session.sealed',
  'page.published',
  'page.updated',
  'page.unpublished',
  'page.taken_down',
  'link.created',
  'link.revoked',
  'session_link.created',
  'session_link.revoked',
  'webhook.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

const KNOWN = new Set<string>(EVENT_TYPES);

export function isEventType(s: string): s is EventType {
  return KNOWN.has(s);
}

/** An event id is its per-tenant position, `evt_` and 16 digits, so ids sort as they happened. */
export const EVENT_ID = /^evt_[0-9]{16}$/;

export function eventId(seq: number): string {
  return `evt_${String(seq).padStart(16, '0')}`;
}

/** The position of an event id, or null when the text is not one. */
export function eventSeq(id: string): number | null {
  return EVENT_ID.test(id) ? Number(id.slice(4)) : null;
}
