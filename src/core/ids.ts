import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * `n` characters of [A-Za-z0-9] from the CSPRNG. Rejection sampling keeps every character
 * equally likely (256 is not a multiple of 62, so a plain modulo would bias the first ones).
 */
export function randomAlnum(n: number): string {
  const limit = 256 - (256 % ALPHABET.length);
  let out = '';
  while (out.length < n) {
    for (const byte of randomBytes(n * 2)) {
      if (byte < limit) out += ALPHABET[byte % ALPHABET.length];
      if (out.length === n) break;
    }
  }
  return out;
}

export const newArtifactId = () => `art_${randomAlnum(16)}`;
export const newPageSlug = () => `pg_${randomAlnum(16)}`;
export const newLinkId = () => `lnk_${randomAlnum(20)}`;
export const newApiKey = () => `ak_live_${randomAlnum(32)}`;
export const newTenantId = () => `ten_${randomAlnum(16)}`;
export const newKeyId = () => `key_${randomAlnum(16)}`;

export { API_KEY, API_KEY_IN_TEXT } from '../shared/api-key.js';
export { ARTIFACT_ID, LABEL, LINK_ID, PAGE_SLUG } from '../shared/id-shapes.js';
