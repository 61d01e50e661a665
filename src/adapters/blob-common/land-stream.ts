import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { LandResult } from '../../ports/blob-store.js';
import { CairnError } from '../../shared/cairn-error.js';
import { limitText } from '../../shared/upload-limits.js';

/**
 * Feeds `source` to `write` chunk by chunk, hashing it on the way, for the `land` of every blob
 * store: past `maxBytes` it rejects with `file_too_large`; when the source itself fails (a dropped
 * connection) it stops and reports `complete: false` instead of rejecting, so the bytes that did
 * arrive can be kept. A failing `write` (the storage) rejects.
 */
export async function feedLanding(
  source: Readable,
  maxBytes: number,
  write: (chunk: Buffer) => Promise<void>,
): Promise<LandResult> {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for (;;) {
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } catch {
      return { sizeBytes, complete: false, sha256: hash.digest('hex') };
    }
    if (next.done) return { sizeBytes, complete: true, sha256: hash.digest('hex') };
    sizeBytes += next.value.length;
    if (sizeBytes > maxBytes) {
      // Drained, not destroyed: the refusal (413) is still answered on this connection.
      source.resume();
      throw new CairnError('file_too_large', `Content is larger than the limit of ${limitText(maxBytes)}.`);
    }
    hash.update(next.value);
    await write(next.value);
  }
}
