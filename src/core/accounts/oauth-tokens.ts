import type { AccountStore, GrantTier, OAuthGrantRow, Principal } from '../../ports/account-store.js';
import { SCOPE_OF } from '../../shared/scopes.js';
import type { CoreDeps } from '../context.js';
import { CairnError } from '../errors.js';
import { mcpResourceOf, sameResource } from './oauth-authorize.js';
import { OAuthError } from './oauth-errors.js';
import {
  ACCESS_TOKEN,
  AUTH_CODE,
  hashSecret,
  newAccessToken,
  newRefreshToken,
  PKCE_VERIFIER,
  pkceMatches,
  REFRESH_TOKEN,
} from './secrets.js';

export const ACCESS_TOKEN_TTL_MS = 3600 * 1000;
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Who an access token acts for, and how far. */
export interface TokenCaller extends Principal {
  grant: OAuthGrantRow;
  tier: GrantTier;
}

type Params = Record<string, string | undefined>;

const invalidGrant = (why: string) => new OAuthError('invalid_grant', why);

/**
 * The token endpoint (authorization_code with PKCE S256, refresh_token with rotation), revocation
 * (RFC 7009) and the check of access tokens at the MCP endpoint. Replaying a used code or a
 * rotated refresh token revokes the whole grant: one of the two parties holding it is an attacker.
 */
export class OAuthTokenService {
  constructor(
    private readonly deps: CoreDeps,
    private readonly store: AccountStore,
  ) {}

  private get resource(): string {
    return mcpResourceOf(this.deps.origins.api);
  }

  async token(p: Params): Promise<TokenResponse> {
    if (p.resource !== undefined && !sameResource(p.resource, this.resource)) {
      throw new OAuthError('invalid_target', `Tokens are issued only for ${this.resource}.`);
    }
    if (p.grant_type === 'authorization_code') return this.exchangeCode(p);
    if (p.grant_type === 'refresh_token') return this.refresh(p);
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
  }

  private async exchangeCode(p: Params): Promise<TokenResponse> {
    if (!p.code || !AUTH_CODE.test(p.code)) throw invalidGrant('The authorization code is missing or malformed.');
    const now = this.deps.clock.now();
    const found = await this.store.consumeCode(hashSecret(p.code), now);
    if (!found) throw invalidGrant('Unknown authorization code.');
    const { code, reused } = found;
    if (reused) {
      await this.revokeGrant(code.grantId, now);
      throw invalidGrant('This authorization code was already used; the connection has been revoked.');
    }
    if (code.expiresAt <= now) throw invalidGrant('The authorization code has expired; authorize again.');
    if (p.client_id !== code.clientId) throw invalidGrant('The code was issued to another client.');
    if (p.redirect_uri !== undefined && p.redirect_uri !== code.redirectUri) {
      throw invalidGrant('redirect_uri does not match the one of the authorization request.');
    }
    if (!p.code_verifier || !PKCE_VERIFIER.test(p.code_verifier) || !pkceMatches(p.code_verifier, code.codeChallenge)) {
      throw invalidGrant('PKCE verification failed: code_verifier is missing or does not match the code_challenge.');
    }
    return this.issue(await this.grantOf(code.grantId), now);
  }

  private async refresh(p: Params): Promise<TokenResponse> {
    if (!p.refresh_token || !REFRESH_TOKEN.test(p.refresh_token))
      throw invalidGrant('The refresh token is missing or malformed.');
    const now = this.deps.clock.now();
    const found = await this.store.useRefreshToken(hashSecret(p.refresh_token), now);
    if (!found) throw invalidGrant('Unknown or revoked refresh token.');
    const { token, grant, reused } = found;
    if (reused) {
      await this.revokeGrant(grant.id, now);
      throw invalidGrant(
        'This refresh token was already used (it is rotated on every use); the connection has been revoked.',
      );
    }
    if (token.expiresAt <= now) throw invalidGrant('The refresh token has expired; authorize again.');
    if (p.client_id !== undefined && p.client_id !== grant.clientId)
      throw invalidGrant('The token was issued to another client.');
    return this.issue(grant, now);
  }

  private async issue(grant: OAuthGrantRow, now: number): Promise<TokenResponse> {
    const access = newAccessToken();
    const refresh = newRefreshToken();
    const base = { grantId: grant.id, resource: this.resource, createdAt: now, usedAt: null };
    await this.store.createTokens([
      { ...base, hash: hashSecret(access), kind: 'access', expiresAt: now + ACCESS_TOKEN_TTL_MS },
      { ...base, hash: hashSecret(refresh), kind: 'refresh', expiresAt: now + REFRESH_TOKEN_TTL_MS },
    ]);
    await this.store.purgeExpired(now, 100);
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_MS / 1000,
      refresh_token: refresh,
      scope: `openid ${SCOPE_OF[grant.tier]}`,
    };
  }

  /** The code's grant, unless it was revoked since the code was issued. */
  private async grantOf(grantId: string): Promise<OAuthGrantRow> {
    const grant = await this.store.getGrant(grantId);
    if (!grant || grant.revokedAt !== null) throw invalidGrant('The connection was revoked; authorize again.');
    return grant;
  }

  /** RFC 7009: always "ok" to the client; a token of this client ends its whole grant. */
  async revoke(p: Params): Promise<void> {
    const token = p.token ?? '';
    if (!p.client_id || !(ACCESS_TOKEN.test(token) || REFRESH_TOKEN.test(token))) return;
    await this.store.revokeGrantOfToken(hashSecret(token), p.client_id, this.deps.clock.now());
  }

  /**
   * The caller behind an access token at the MCP endpoint. Every failure (unknown, expired,
   * revoked, bound to another resource) is the same 401.
   */
  async authenticate(bearer: string): Promise<TokenCaller> {
    const fail = () =>
      new CairnError('unauthorized', 'The access token is invalid, expired or revoked; authorize again.');
    if (!ACCESS_TOKEN.test(bearer)) throw fail();
    const found = await this.store.findToken(hashSecret(bearer), 'access');
    if (
      !found ||
      found.token.expiresAt <= this.deps.clock.now() ||
      !sameResource(found.token.resource, this.resource)
    ) {
      throw fail();
    }
    return { user: found.user, tenant: found.tenant, grant: found.grant, tier: found.grant.tier };
  }

  private async revokeGrant(grantId: string, now: number): Promise<void> {
    const grant = await this.store.getGrant(grantId);
    if (grant && grant.revokedAt === null) await this.store.revokeGrant(grant.userId, grant.id, now);
  }
}
