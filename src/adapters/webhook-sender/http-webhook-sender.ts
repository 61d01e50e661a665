import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import type { SendOutcome, WebhookSender } from '../../ports/webhook-sender.js';
import { isPrivateAddress } from '../../shared/private-address.js';

/** Resolves a host name to all its addresses (node:dns's lookup, or a test's resolver). */
export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

const systemResolve: Resolve = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

export interface HttpWebhookSenderOptions {
  /** Deliver to loopback/private/link-local addresses too (development, tests). */
  allowPrivate: boolean;
  /** The whole attempt, redirects included. */
  timeoutMs: number;
  /** Response bytes read at most; the rest is not waited for. */
  maxResponseBytes: number;
  maxRedirects: number;
  resolve?: Resolve;
  /**
   * Whether an address (resolved from `host`) may be reached; default: not a private one
   * (isPrivateAddress). Tests narrow it to admit one loopback server while refusing the rest.
   */
  isAllowed?: (address: string, host: string) => boolean;
}

class Refused extends Error {}

/**
 * Deliveries over node:http/https. The name is resolved here and every address checked before
 * connecting, and the socket connects to the checked address (the `lookup` hook hands it over),
 * so a name cannot resolve to a public address for the check and a private one for the connect
 * (DNS rebinding). Redirects (307/308 keep the POST; 301/302/303 are refused, as a POST must not
 * turn into a GET) are checked the same way, each one.
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly resolve: Resolve;

  constructor(private readonly opts: HttpWebhookSenderOptions) {
    this.resolve = opts.resolve ?? systemResolve;
  }

  async send(url: string, headers: Record<string, string>, body: string): Promise<SendOutcome> {
    const started = performance.now();
    const deadline = Date.now() + this.opts.timeoutMs;
    const elapsed = () => Math.round(performance.now() - started);
    let target = url;
    try {
      for (let hop = 0; ; hop++) {
        const { status, location } = await this.post(target, headers, body, deadline);
        if ((status === 307 || status === 308) && location) {
          if (hop >= this.opts.maxRedirects) return { status, error: 'too many redirects', durationMs: elapsed() };
          target = new URL(location, target).toString();
          continue;
        }
        const ok = status >= 200 && status < 300;
        return { status, error: ok ? null : `HTTP ${status}`, durationMs: elapsed() };
      }
    } catch (err) {
      const message = err instanceof Refused ? err.message : `delivery failed: ${(err as Error).message}`;
      return { status: null, error: message.slice(0, 300), durationMs: elapsed() };
    }
  }

  /** The checked address of `host` (every address it resolves to must be allowed). */
  private async address(host: string): Promise<{ address: string; family: number }> {
    const bare = host.replace(/^\[|\]$/g, '');
    const found = isIP(bare) ? [{ address: bare, family: isIP(bare) }] : await this.resolve(bare);
    if (found.length === 0) throw new Refused(`${host} does not resolve`);
    if (!this.opts.allowPrivate) {
      const allowed = this.opts.isAllowed ?? ((address: string) => !isPrivateAddress(address));
      const bad = found.find((a) => !allowed(a.address, bare));
      if (bad)
        throw new Refused(`refused: ${host} resolves to a private, loopback or link-local address (${bad.address})`);
    }
    return found[0]!;
  }

  private async post(
    target: string,
    headers: Record<string, string>,
    body: string,
    deadline: number,
  ): Promise<{ status: number; location: string | undefined }> {
    const url = new URL(target);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Refused(`refused: ${url.protocol} URL`);
    if (url.username || url.password) throw new Refused('refused: a URL with credentials');
    const picked = await this.address(url.hostname);
    const lookup: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) callback(null, [picked]);
      else callback(null, picked.address, picked.family);
    };
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error('timed out');
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = client.request(
        url,
        {
          method: 'POST',
          lookup,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          timeout: remaining,
          agent: false,
        },
        (res) => {
          let read = 0;
          const done = () => {
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, location: res.headers.location });
          };
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            // Enough: the status is what counts; a receiver cannot make us hold its reply.
            if (read > this.opts.maxResponseBytes) {
              res.destroy();
              done();
            }
          });
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        },
      );
      const timer = setTimeout(() => req.destroy(new Error('timed out')), remaining);
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(body);
    });
  }
}
