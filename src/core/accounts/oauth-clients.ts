import type { AccountStore, OAuthClientRow } from '../../ports/account-store.js';
import type { RateRule } from '../../ports/rate-limiter.js';
import { isStorableText } from '../../shared/storable-text.js';
import { RateLimitedError } from '../access.js';
import type { CoreDeps } from '../context.js';
import { truncateCodePoints } from '../validation.js';
import { OAuthError } from './oauth-errors.js';
import { newClientId } from './secrets.js';

/**
 * The fixed public client for MCP clients without Dynamic Client Registration (RFC 8252 native
 * apps): it accepts any http loopback redirect URI, on any port and path.
 */
export const PUBLIC_CLIENT_ID = 'cairn-public';
export const PUBLIC_CLIENT_NAME = 'Cairn public client (apps on this computer)';

/** Registrations per client IP. */
export const REGISTER_PER_IP: RateRule = { burst: 20, sustainedPerSecond: 20 / 3600 };

export interface ClientView {
  id: string;
  name: string;
  redirectUris: string[];
  /** Registered by itself through RFC 7591: shown as "unverified" on the consent screen. */
  selfRegistered: boolean;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

function parse(uri: unknown): URL | null {
  if (typeof uri !== 'string' || uri.length > 2000) return null;
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

/**
 * Redirect URIs Cairn accepts: https anywhere, or http on a loopback address; never a fragment or
 * credentials; and written exactly as the URL standard serialises it (`http://127.0.0.1/cb`, not
 * `http://2130706433/cb` or `http://127.1/cb`, which name the same address), so that the URI a
 * person sees on the consent screen is the one the browser goes to and an exact match means one.
 */
export function acceptableRedirectUri(uri: unknown): boolean {
  const url = parse(uri);
  if (url === null || url.href !== uri) return false;
  if (url.hash !== '' || url.username !== '' || url.password !== '') return false;
  return (url.protocol === 'https:' && url.hostname !== '') || isLoopbackHttp(url);
}

/**
 * Whether `uri` is one of the client's redirect URIs: exactly, or for a loopback one with any
 * port (RFC 8252 §7.3: native apps pick a free port at run time).
 */
export function redirectUriAllowed(client: ClientView, uri: string): boolean {
  const url = parse(uri);
  if (!url || !acceptableRedirectUri(uri)) return false;
  if (client.id === PUBLIC_CLIENT_ID) return isLoopbackHttp(url);
  return client.redirectUris.some((registered) => {
    if (registered === uri) return true;
    const r = parse(registered);
    if (!r || !isLoopbackHttp(r) || !isLoopbackHttp(url)) return false;
    return r.hostname === url.hostname && r.pathname === url.pathname && r.search === url.search;
  });
}

const SECRET_AUTH_METHODS = new Set([
  'client_secret_basic',
  'client_secret_post',
  'client_secret_jwt',
  'private_key_jwt',
]);

/** Dynamic Client Registration (RFC 7591) of public clients, and lookup of registered and fixed clients. */
export class OAuthClientService {
  constructor(
    private readonly deps: CoreDeps,
    private readonly store: AccountStore,
  ) {}

  async get(id: unknown): Promise<ClientView | null> {
    if (typeof id !== 'string' || id === '' || id.length > 100) return null;
    if (id === PUBLIC_CLIENT_ID) {
      return { id, name: PUBLIC_CLIENT_NAME, redirectUris: [], selfRegistered: false };
    }
    const row = await this.store.getClient(id);
    return row ? { ...row, selfRegistered: true } : null;
  }

  async register(body: unknown, ip: string): Promise<Record<string, unknown>> {
    const decision = await this.deps.limiter.take(`oauth-register:${ip}`, REGISTER_PER_IP, this.deps.clock.now());
    if (!decision.allowed) throw new RateLimitedError(decision);
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new OAuthError('invalid_client_metadata', 'Send the client metadata as a JSON object.');
    }
    const m = body as Record<string, unknown>;
    const method = m.token_endpoint_auth_method ?? 'none';
    if (method !== 'none' || m.client_secret !== undefined || m.jwks !== undefined || m.jwks_uri !== undefined) {
      const why = SECRET_AUTH_METHODS.has(String(method))
        ? `'${String(method)}' is a confidential client method`
        : 'secrets';
      throw new OAuthError(
        'invalid_client_metadata',
        `Only public clients can register (token_endpoint_auth_method "none", with PKCE); ${why} are not accepted.`,
      );
    }
    const grantTypes = m.grant_types ?? ['authorization_code', 'refresh_token'];
    if (!isSubset(grantTypes, ['authorization_code', 'refresh_token'])) {
      throw new OAuthError('invalid_client_metadata', 'grant_types may only be authorization_code and refresh_token.');
    }
    const responseTypes = m.response_types ?? ['code'];
    if (!isSubset(responseTypes, ['code'])) {
      throw new OAuthError('invalid_client_metadata', 'response_types may only be code.');
    }
    const uris = m.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10) {
      throw new OAuthError('invalid_redirect_uri', 'Give 1 to 10 redirect_uris.');
    }
    const bad = uris.find((u) => !acceptableRedirectUri(u));
    if (bad !== undefined) {
      const canonical = parse(bad)?.href;
      throw new OAuthError(
        'invalid_redirect_uri',
        canonical !== undefined && canonical !== bad && acceptableRedirectUri(canonical)
          ? `Redirect URI ${JSON.stringify(bad).slice(0, 200)} is not written as the URL standard writes it; register ${JSON.stringify(canonical).slice(0, 200)} and send that.`
          : `Redirect URI ${JSON.stringify(bad).slice(0, 200)} is not accepted: use https, or http on 127.0.0.1, [::1] or localhost, without a fragment.`,
      );
    }
    if (typeof m.client_name === 'string' && !isStorableText(m.client_name)) {
      throw new OAuthError(
        'invalid_client_metadata',
        'client_name must be Unicode text: no U+0000 and no unpaired surrogate (such as "\\ud800").',
      );
    }
    const name =
      typeof m.client_name === 'string' && m.client_name.trim() !== ''
        ? truncateCodePoints(m.client_name.trim(), 100)
        : 'Unnamed MCP client';
    const client: OAuthClientRow = {
      id: newClientId(),
      name,
      redirectUris: uris as string[],
      createdAt: this.deps.clock.now(),
    };
    await this.store.createClient(client);
    return {
      client_id: client.id,
      client_id_issued_at: Math.floor(client.createdAt / 1000),
      client_name: client.name,
      redirect_uris: client.redirectUris,
      grant_types: grantTypes,
      response_types: responseTypes,
      token_endpoint_auth_method: 'none',
    };
  }
}

function isSubset(value: unknown, allowed: string[]): boolean {
  return Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string' && allowed.includes(v));
}
