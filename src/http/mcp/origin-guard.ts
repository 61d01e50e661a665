import type { IncomingHttpHeaders } from 'node:http';

/**
 * DNS-rebinding and cross-site protection of the hosted MCP endpoint. A page on another site
 * (or a name rebound to 127.0.0.1) must not reach it from a browser:
 * - `Origin`, when present, must be the API origin, one of CAIRN_MCP_ALLOWED_ORIGINS, or (on a
 *   loopback listener) a page served from this machine. Absent is fine: non-browser clients.
 * - `Host`, on a loopback listener, must be a loopback name or the API origin's host.
 */
export interface OriginPolicy {
  /** Read per request: with port 0 the API origin is known only after binding. */
  apiOrigin(): string;
  extraOrigins: readonly string[];
  /** The API listener is bound to a loopback address. */
  loopback: boolean;
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

export function isLoopbackBind(host: string): boolean {
  return LOOPBACK_NAMES.has(host) || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function hostnameOf(url: string): string | null {
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

/** Why the request is refused, or null when it may proceed. */
export function refuseHostOrOrigin(headers: IncomingHttpHeaders, policy: OriginPolicy): string | null {
  const api = policy.apiOrigin();
  if (policy.loopback) {
    const host = headers.host ?? '';
    const name = hostnameOf(`http://${host}`);
    if (name === null || !(LOOPBACK_NAMES.has(name) || host === new URL(api).host)) {
      return `Host '${host.slice(0, 100)}' is not allowed: this Cairn listens on loopback only (DNS rebinding protection).`;
    }
  }
  const origin = headers.origin;
  if (origin === undefined) return null;
  if (origin === api || policy.extraOrigins.includes(origin)) return null;
  const name = hostnameOf(origin);
  if (policy.loopback && name !== null && LOOPBACK_NAMES.has(name) && /^https?:$/.test(new URL(origin).protocol)) {
    return null;
  }
  return `Origin '${origin.slice(0, 100)}' may not call the MCP endpoint; add it to CAIRN_MCP_ALLOWED_ORIGINS if it is yours.`;
}
