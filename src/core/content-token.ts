import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Content tokens: compact HS256 JWTs with claims `slug`, `purpose: "page_content"`, `exp` and
 * `pwb`, issued by unlock and accepted only by the content origin for that one slug. They are not
 * API keys: the API's bearer check only knows `ak_live_` keys, so a token can never call the API.
 *
 * `pwb` binds a token to the password it was issued for: a keyed digest of the page's stored
 * password hash (which has a fresh salt at every publish). When the owner changes the password,
 * or re-publishes the page at all, the stored hash changes and every earlier token stops working
 * at once instead of living out its 300 s. Being keyed, it says nothing about the hash itself.
 */
export const CONTENT_TOKEN_PURPOSE = 'page_content';
export const CONTENT_TOKEN_SECONDS = 300;

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

function hmac(secret: string, signingInput: string): Buffer {
  // The token key is derived from the instance secret so it differs from the URL-signing key.
  return createHmac('sha256', `content-token\n${secret}`).update(signingInput).digest();
}

/** The `pwb` claim for a stored password hash: 16 characters of a keyed SHA-256. */
export function passwordBinding(secret: string, passwordHash: string): string {
  return createHmac('sha256', `content-token-binding\n${secret}`)
    .update(passwordHash)
    .digest()
    .subarray(0, 12)
    .toString('base64url');
}

export function issueContentToken(secret: string, slug: string, passwordHash: string, nowMs: number): string {
  const exp = Math.floor(nowMs / 1000) + CONTENT_TOKEN_SECONDS;
  const pwb = passwordBinding(secret, passwordHash);
  const payload = base64url(JSON.stringify({ slug, purpose: CONTENT_TOKEN_PURPOSE, exp, pwb }));
  const input = `${HEADER}.${payload}`;
  return `${input}.${hmac(secret, input).toString('base64url')}`;
}

/**
 * True only for an untampered, unexpired HS256 token of purpose `page_content` for `slug`, issued
 * while the page's stored password hash was `passwordHash`.
 */
export function verifyContentToken(
  secret: string,
  token: string,
  slug: string,
  passwordHash: string,
  nowMs: number,
): boolean {
  const parts = token.split('.');
  if (parts.length !== 3) return false;
  const [header, payload, signature] = parts as [string, string, string];
  // Only our exact header is accepted: no `alg: none`, no other algorithm.
  if (header !== HEADER) return false;
  const expected = hmac(secret, `${header}.${payload}`);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return false;
  }
  if (typeof claims !== 'object' || claims === null) return false;
  const { slug: s, purpose, exp, pwb } = claims as Record<string, unknown>;
  return (
    s === slug &&
    purpose === CONTENT_TOKEN_PURPOSE &&
    typeof exp === 'number' &&
    exp * 1000 > nowMs &&
    pwb === passwordBinding(secret, passwordHash)
  );
}
