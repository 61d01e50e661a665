/**
 * U+0000 and lone surrogates: valid in a JS string and in JSON text, refused by PostgreSQL text
 * and jsonb. No backend takes them, so an artifact's fate does not depend on where it is kept.
 */
const UNSTORABLE = /\u0000|\p{Cs}/u;

export const isStorableText = (text: string): boolean => !UNSTORABLE.test(text);

export const UNSTORABLE_METADATA = 'metadata strings must not contain U+0000 or unpaired surrogates.';
