import type { Readable } from 'node:stream';
import { CairnError } from '../../shared/cairn-error.js';

/**
 * Feeds `source` to `write` chunk by chunk, for the `land` of every blob store: past `maxBytes` it
 * rejects with `file_too_large`; when the source itself fails (a dropped connection) it stops and
 * reports `complete: false` instead of rejecting, so the bytes that did arrive can be kept. A
 * failing `write` (the storage) rejects.
 */
export async function feedLanding(
  source: Readable,
  maxBytes: number,
  write: (chunk: Buffer) => Promise<void>,
): Promise<{ sizeBytes: number; complete: boolean }> {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let sizeBytes = 0;
  for (;;) {
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } catch {
      return { sizeBytes, complete: false };
    }
    if (next.done) return { sizeBytes, complete: true };
    sizeBytes += next.value.length;
    if (sizeBytes > maxBytes) {
      // Drained, not destroyed: the refusal (413) is still answered on this connection.
      source.resume();
      throw new CairnError('file_too_large', `Content is larger than the limit of ${maxBytes} bytes.`);
    }
    await write(next.value);
  }
}
