import type { AccountStore, GrantTier, Principal } from '../../ports/account-store.js';
import type { CoreDeps } from '../context.js';
import { type ClientView, type OAuthClientService, redirectUriAllowed } from './oauth-clients.js';
import type { OAuthErrorCode } from './oauth-errors.js';
import { hashSecret, newAuthCode, newGrantId, PKCE_CHALLENGE } from './secrets.js';

/** Authorization codes are one-time and short-lived. */
export const CODE_TTL_MS = 60_000;

/** The hosted MCP endpoint, the one resource (RFC 8707) Cairn issues tokens for. */
export const mcpResourceOf = (apiOrigin: string) => `${apiOrigin}/mcp`;

/** RFC 8707 resource comparison: scheme and host case-insensitively, a trailing slash ignored. */
export function sameResource(given: string, expected: string): boolean {
  try {
    const a = new URL(given);
    const b = new URL(expected);
    const path = (u: URL) => u.pathname.replace(/\/+$/, '');
    return a.origin === b.origin && path(a) === path(b) && a.search === '' && a.hash === '';
  } catch {
    return false;
  }
}

/** A checked authorization request, carried through login and the consent form. */
export interface AuthorizeRequest {
  client: ClientView;
  redirectUri: string;
  state: string | undefined;
  codeChallenge: string;
  resource: string;
}

export type AuthorizeCheck =
  | { kind: 'ok'; request: AuthorizeRequest }
  /** Client or redirect URI not trustworthy: show an error page, never redirect (RFC 6749 §4.1.2.1). */
  | { kind: 'fatal'; message: string }
  /** Anything else goes back to the client on its redirect URI. */
  | { kind: 'redirect'; url: string };

export type AuthorizeParams = Record<string, string | undefined>;

/** The authorization endpoint's rules: PKCE S256 required, scope `openid` only, the MCP resource only. */
export class OAuthAuthorizeService {
  constructor(
    private readonly deps: CoreDeps,
    private readonly store: AccountStore,
    private readonly clients: OAuthClientService,
  ) {}

  get resource(): string {
    return mcpResourceOf(this.deps.origins.api);
  }

  async check(p: AuthorizeParams): Promise<AuthorizeCheck> {
    const client = await this.clients.get(p.client_id);
    if (!client) return { kind: 'fatal', message: 'Unknown client_id: this application is not registered with Cairn.' };
    const redirectUri = p.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined);
    if (!redirectUri || !redirectUriAllowed(client, redirectUri)) {
      return { kind: 'fatal', message: 'The redirect_uri is missing or is not one this application registered.' };
    }
    const fail = (error: OAuthErrorCode, description: string): AuthorizeCheck => ({
      kind: 'redirect',
      url: errorRedirect(redirectUri, error, description, p.state),
    });
    if (p.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code.');
    if (p.scope !== undefined && p.scope.trim() !== '' && p.scope.trim() !== 'openid') {
      return fail(
        'invalid_scope',
        'The only scope is openid; permissions (Read, Write, Destroy) are chosen on the consent screen.',
      );
    }
    if (!p.code_challenge || !PKCE_CHALLENGE.test(p.code_challenge) || p.code_challenge_method !== 'S256') {
      return fail('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
    }
    if (p.resource !== undefined && !sameResource(p.resource, this.resource)) {
      return fail('invalid_target', `Tokens are issued only for ${this.resource}.`);
    }
    return {
      kind: 'ok',
      request: { client, redirectUri, state: p.state, codeChallenge: p.code_challenge, resource: this.resource },
    };
  }

  /** The user said yes: the grant gets `tier` (replacing an earlier one), and the client gets a code. */
  async approve(principal: Principal, request: AuthorizeRequest, tier: GrantTier): Promise<string> {
    const now = this.deps.clock.now();
    const grant = await this.store.upsertGrant(
      { id: newGrantId(), tenantId: principal.tenant.id, userId: principal.user.id, clientId: request.client.id, tier },
      now,
    );
    const code = newAuthCode();
    await this.store.createCode({
      hash: hashSecret(code),
      grantId: grant.id,
      clientId: request.client.id,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      createdAt: now,
      expiresAt: now + CODE_TTL_MS,
      usedAt: null,
    });
    const url = new URL(request.redirectUri);
    url.searchParams.set('code', code);
    if (request.state !== undefined) url.searchParams.set('state', request.state);
    url.searchParams.set('iss', this.deps.origins.api);
    return url.toString();
  }

  deny(request: AuthorizeRequest): string {
    return errorRedirect(request.redirectUri, 'access_denied', 'The user declined the request.', request.state);
  }
}

function errorRedirect(
  redirectUri: string,
  error: OAuthErrorCode,
  description: string,
  state: string | undefined,
): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (state !== undefined) url.searchParams.set('state', state);
  return url.toString();
}
