import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { randomAlnum } from '../ids.js';
import { storedHash } from '../stored-hash.js';

/**
 * Secrets handed to browsers and OAuth clients. Each carries ~250 random bits, so a fast hash is
 * enough to store it: the database only ever holds `hashSecret(secret)` (see storedHash).
 */
export const hashSecret = (secret: string): string => storedHash(secret);

export const newSessionId = () => randomAlnum(43);
export const newAuthCode = () => `mcp_ac_${randomAlnum(43)}`;
export const newAccessToken = () => `mcp_at_${randomAlnum(43)}`;
export const newRefreshToken = () => `mcp_rt_${randomAlnum(43)}`;
export const newUserId = () => `usr_${randomAlnum(16)}`;
export const newGrantId = () => `grt_${randomAlnum(16)}`;
export const newClientId = () => `cli_${randomAlnum(24)}`;

/** Shapes of what we hand out, so anything else is refused before a lookup. */
export const ACCESS_TOKEN = /^mcp_at_[A-Za-z0-9]{43}$/;
export const REFRESH_TOKEN = /^mcp_rt_[A-Za-z0-9]{43}$/;
export const AUTH_CODE = /^mcp_ac_[A-Za-z0-9]{43}$/;
export const SESSION_ID = /^[A-Za-z0-9]{43}$/;

/** PKCE S256 (RFC 7636): base64url(SHA-256(verifier)), compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

/** RFC 7636: 43-128 characters of the unreserved set. */
export const PKCE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** A base64url SHA-256 is 43 characters. */
export const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** HMAC-SHA256 tags (CSRF tokens) and their constant-time check. */
export class Tagger {
  constructor(private readonly key: string) {}

  tag(value: string): string {
    return createHmac('sha256', this.key).update(value).digest('base64url');
  }

  verify(value: string, tag: unknown): boolean {
    if (typeof tag !== 'string') return false;
    const a = Buffer.from(this.tag(value));
    const b = Buffer.from(tag);
    return a.length === b.length && timingSafeEqual(a, b);
  }
}
