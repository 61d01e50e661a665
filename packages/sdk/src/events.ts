import { setTimeout as sleep } from 'node:timers/promises';
import { nodeCrypto } from './builtins.js';
import { CairnError } from './errors.js';
import type { EventRecord } from './records.js';
import type { Transport } from './transport.js';

export interface FollowEventsOptions {
  /** Start after this event id (default: the events made from now on). */
  after?: string;
  /** Event types or prefixes (`artifact.*`). */
  types?: string[];
  sessionId?: string;
  /** Stops following (the iterator then ends). */
  signal?: AbortSignal;
  /** Told each time the stream is (re)opened, with the id it resumes after. */
  onConnect?: (after: string | undefined) => void;
}

/**
 * Follows `GET /v1/events/stream` for as long as the caller iterates: each event once, in order.
 * When the connection drops (or the server restarts), it reconnects with `Last-Event-ID` set to
 * the last event it yielded, after a wait that grows from 0.5 s to 30 s while connecting fails.
 */
export async function* followEvents(http: Transport, opts: FollowEventsOptions = {}): AsyncGenerator<EventRecord> {
  let last = opts.after;
  let failures = 0;
  while (!opts.signal?.aborted) {
    try {
      opts.onConnect?.(last);
      const res = await http.send({
        method: 'GET',
        path: '/v1/events/stream',
        query: {
          types: opts.types?.join(','),
          session_id: opts.sessionId,
          // The first connection names its start by `after`; a reconnect by Last-Event-ID.
          after: last === undefined ? undefined : last,
        },
        headers: { accept: 'text/event-stream', ...(last ? { 'last-event-id': last } : {}) },
        idempotent: true,
        streamResponse: true,
      });
      if (!res.body)
        throw new CairnError({ code: 'invalid_response', message: 'The stream had no body.', status: res.status });
      failures = 0;
      for await (const message of parseStream(res.body, opts.signal)) {
        // An id alone (where the stream starts) moves the resume point without an event.
        if (message.id) last = message.id;
        if (message.record) yield message.record;
      }
    } catch (err) {
      if (opts.signal?.aborted) return;
      // A refusal that will not change (a bad key, a bad filter) ends the iteration.
      if (err instanceof CairnError && err.status >= 400 && err.status < 500 && err.status !== 429) throw err;
      failures++;
    }
    if (opts.signal?.aborted) return;
    const wait = failures === 0 ? 500 : Math.min(30_000, 500 * 2 ** failures);
    await sleep(wait, undefined, { ref: false, signal: opts.signal }).catch(() => {});
  }
}

/** The messages of a text/event-stream body: each id, with its event when it has data (comments are skipped). */
async function* parseStream(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
): AsyncGenerator<{ id: string | null; record: EventRecord | null }> {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  signal?.addEventListener('abort', onAbort, { once: true });
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let id: string | null = null;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl = buffer.indexOf('\n');
      while (nl !== -1) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (data.length > 0 || id !== null) {
            yield { id, record: data.length > 0 ? (JSON.parse(data.join('\n')) as EventRecord) : null };
          }
          data = [];
          id = null;
        } else if (line.startsWith('data:')) {
          data.push(line.slice(5).replace(/^ /, ''));
        } else if (line.startsWith('id:')) {
          id = line.slice(3).trim();
        }
        nl = buffer.indexOf('\n');
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await reader.cancel().catch(() => {});
  }
}

/**
 * Checks a webhook delivery as the Standard Webhooks specification says: one of the signatures
 * in `webhook-signature` is HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${body}` with the
 * secret, and the timestamp is within `toleranceSeconds` of now. Returns the event, or throws
 * CairnError `invalid_signature`. Pass the body exactly as received (a string or its bytes).
 */
export function verifyWebhook(
  secret: string,
  headers: Record<string, string | string[] | undefined> | { get(name: string): string | null },
  body: string | Uint8Array,
  opts: { toleranceSeconds?: number; now?: number } = {},
): EventRecord {
  const header = (name: string): string => {
    const v =
      'get' in headers && typeof headers.get === 'function'
        ? headers.get(name)
        : (headers as Record<string, unknown>)[name];
    return Array.isArray(v) ? String(v[0] ?? '') : String(v ?? '');
  };
  const fail = (message: string) => new CairnError({ code: 'invalid_signature', message, status: 0 });
  const id = header('webhook-id');
  const timestamp = header('webhook-timestamp');
  const signatures = header('webhook-signature');
  if (!id || !/^\d+$/.test(timestamp) || !signatures)
    throw fail('Missing webhook-id, webhook-timestamp or webhook-signature.');
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  if (Math.abs(now - Number(timestamp)) > (opts.toleranceSeconds ?? 300))
    throw fail('The webhook timestamp is too old or too new.');
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const { createHmac, timingSafeEqual } = nodeCrypto();
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${text}`).digest();
  const match = signatures.split(' ').some((s) => {
    const [version, value] = s.split(',');
    if (version !== 'v1' || !value) return false;
    const given = Buffer.from(value, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!match) throw fail('No signature matches this secret.');
  return JSON.parse(text) as EventRecord;
}
