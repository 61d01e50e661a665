import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/core/accounts/secrets.js';
import { newApiKey } from '../../src/core/ids.js';
import { hashApiKey } from '../../src/core/tenants.js';

/**
 * Databases hold these hashes, not the keys and secrets: a key issued by an earlier version must
 * still be found after an upgrade, so the stored form (SHA-256 of the text, lower-case hex) is
 * pinned here whatever computes it.
 */
describe('stored hashes of API keys and secrets', () => {
  const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

  it('are the SHA-256 of the text in lower-case hex', () => {
    expect(hashApiKey('abc')).toBe(abc);
    expect(hashSecret('abc')).toBe(abc);
  });

  it('match what a createHash object gives for real keys, non-ASCII text included', () => {
    for (const text of [newApiKey(), newApiKey(), 'clé-ünïcode-秘密']) {
      const expected = createHash('sha256').update(text).digest('hex');
      expect(hashApiKey(text)).toBe(expected);
      expect(hashSecret(text)).toBe(expected);
    }
  });
});
