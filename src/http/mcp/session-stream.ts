import type { Core } from '../../core/index.js';
import { touchedUris } from '../../mcp/touched-uris.js';
import type { EventRow } from '../../ports/event-store.js';
import { eventId } from '../../shared/event-types.js';

/**
 * The frames of a hosted MCP session's GET stream for a page of its tenant's events: one
 * `notifications/resources/updated` for each subscribed resource an event touches (a session
 * gaining, losing or sealing an artifact; an artifact deleted, expired, published, shared), each
 * with the event's id, so a client that reconnects with Last-Event-ID misses none. The session's
 * subscriptions are read once per page, from the database: a subscribe made on another instance
 * counts from the next event. Null once the session has ended (DELETE, expiry): the stream ends.
 */
export function sessionFrames(core: Core, sessionId: string) {
  return async (rows: readonly EventRow[]): Promise<string[] | null> => {
    const subscribed = await core.mcpSessions.subscriptions(sessionId);
    if (subscribed === null) return null;
    const frames: string[] = [];
    if (subscribed.size === 0) return frames;
    for (const row of rows) {
      const uris = touchedUris(core.events.render(row)).filter((uri) => subscribed.has(uri));
      uris.forEach((uri, i) => {
        const message = { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } };
        // The id on the event's last frame only: a client resuming from it has had them all.
        const id = i === uris.length - 1 ? `id: ${eventId(row.seq)}\n` : '';
        frames.push(`${id}event: message\ndata: ${JSON.stringify(message)}\n\n`);
      });
    }
    return frames;
  };
}
