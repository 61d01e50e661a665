import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CairnClient } from 'cairn-store-sdk';
import { touchedUris } from './touched-uris.js';

/** What the local server follows the change feed with (the SDK client's stream). */
export type EventFollower = Pick<CairnClient, 'followEvents'>;

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
