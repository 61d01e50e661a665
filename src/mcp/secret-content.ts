import { Readable } from 'node:stream';
import { API_KEY_IN_TEXT } from '../shared/api-key.js';
import { PathRefusedError } from './paths.js';

/**
 * Bytes no one means to store from a local file, whatever the file is called: a Cairn API key
 * (`ak_live_` + 32 letters and digits) and a private key block (`-----BEGIN … PRIVATE KEY-----`,
 * also inside a service-account JSON file or a copy of `id_rsa` under another name). A key-shaped
 * placeholder of few distinct characters (`ak_live_XXXX…`, as the docs write one) is no key.
 */
const PRIVATE_KEY_BLOCK = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/;
/** Room for the longest secret to be split between two chunks. */
const CARRY = 96;
/** Fewer distinct characters than this in 32 random ones is a placeholder (odds for a real key: below 1e-20). */
const KEY_MIN_DISTINCT = 8;

/** What secret `text` holds, or null. */
export function secretIn(text: string): string | null {
  for (const m of text.matchAll(new RegExp(API_KEY_IN_TEXT.source, 'g'))) {
    if (new Set(m[0].slice('ak_live_'.length)).size >= KEY_MIN_DISTINCT) return 'a Cairn API key (ak_live_…)';
  }
  return PRIVATE_KEY_BLOCK.test(text) ? 'a private key (-----BEGIN … PRIVATE KEY-----)' : null;
}

/**
 * A local file's stream, checked as it passes: the chunk in which a secret is complete is never
 * passed on; the stream fails instead, so the upload it feeds is cut off before its end and stores
 * nothing. `refusal()` is then that failure, a `denied` PathRefusedError (the upload itself only
 * sees its body break).
 */
export function secretChecked(
  chunks: AsyncIterable<Buffer>,
  requested: string,
): { body: Readable; refusal(): PathRefusedError | null } {
  let refused: PathRefusedError | null = null;
  async function* checked(): AsyncGenerator<Buffer> {
    let carried = '';
    for await (const chunk of chunks) {
      // latin1: one character per byte, so the ASCII patterns match whatever the file's encoding.
      const text = carried + chunk.toString('latin1');
      const secret = secretIn(text);
      if (secret) {
        refused = new PathRefusedError(
          `refused ${requested}: its bytes hold ${secret}, which is never stored from a file.`,
          'denied',
        );
        throw refused;
      }
      carried = text.slice(-CARRY);
      yield chunk;
    }
  }
  return { body: Readable.from(checked(), { objectMode: false }), refusal: () => refused };
}
