import type { IncomingHttpHeaders } from 'node:http';

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) describe one connection, so a proxy never forwards them:
 * a `Connection: close` the server sends after answering a request early (lingering-close.ts) is
 * about the server's connection, and a proxy that passed it on would close the client's at once,
 * while the client may still be sending the rest of its body (a reset that can lose the answer).
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/** The headers of an upstream answer a proxy passes on to its client. */
export function endToEndHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase())));
}
