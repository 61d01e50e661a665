import { hash } from 'node:crypto';

/**
 * How Cairn stores a high-entropy credential (an API key, a session id, an OAuth code or token):
 * SHA-256 of the text as lower-case hex. They carry ~190–250 random bits, so a fast hash is the
 * right tool (passwords get Argon2id instead). Databases hold this form, so it must never change
 * (test/unit/stored-hashes.test.ts pins it). One-shot `hash` because every authenticated request
 * computes one: it costs a quarter of a `createHash` object's update and digest.
 */
export const storedHash = (credential: string): string => hash('sha256', credential, 'hex');
