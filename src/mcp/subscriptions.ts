import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CairnClient, EventRecord } from 'cairn-store-sdk';

/** What the local server follows the change feed with (the SDK client's stream). */
export type EventFollower = Pick<CairnClient, 'followEvents'>;

/** The resources an event changes: the artifact's record and bytes, and its session's view. */
export function touchedUris(e: EventRecord): string[] {
  const d = e.data as unknown as Record<string, unknown>;
  const uris: string[] = [];
  const artifactId = typeof d.artifact_id === 'string' ? d.artifact_id : null;
  if (artifactId) uris.push(`cairn://artifact/${artifactId}`);
  if (artifactId && e.type.startsWith('artifact.')) uris.push(`cairn://artifact/${artifactId}/bytes`);
  if (typeof d.session_id === 'string' && (e.type.startsWith('artifact.') || e.type === 'session.sealed')) {
    uris.push(`cairn://session/${encodeURIComponent(d.session_id)}`);
  }
  return uris;
}

/**
 * `resources/subscribe` on the local server: while any resource is subscribed, the server follows
 * the account's change feed (GET /v1/events/stream, through the SDK, which resumes after a
 * dropped connection) and sends `notifications/resources/updated` for each subscribed resource an
 * event touches: a session that gains, loses or seals an artifact; an artifact deleted, expired,
 * published or shared. Nothing is followed while nothing is subscribed.
 */
export function installSubscriptions(server: Server, follower: EventFollower): { close(): void } {
  const subscribed = new Set<string>();
  let following: AbortController | null = null;

  const follow = () => {
    if (following) return;
    const ctl = new AbortController();
    following = ctl;
    void (async () => {
      try {
        for await (const e of follower.followEvents({ signal: ctl.signal })) {
          for (const uri of touchedUris(e)) {
            if (subscribed.has(uri)) await server.sendResourceUpdated({ uri }).catch(() => {});
          }
        }
      } catch (err) {
        process.stderr.write(`cairn mcp: resource updates stopped: ${(err as Error).message}\n`);
      } finally {
        if (following === ctl) following = null;
      }
    })();
  };
  const stop = () => {
    following?.abort();
    following = null;
  };

  server.setRequestHandler(SubscribeRequestSchema, (req) => {
    subscribed.add(req.params.uri);
    follow();
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    subscribed.delete(req.params.uri);
    if (subscribed.size === 0) stop();
    return {};
  });
  return { close: stop };
}
