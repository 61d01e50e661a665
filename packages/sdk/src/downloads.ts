import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { nodeCrypto } from './builtins.js';
import { CairnError } from './errors.js';
import type { DownloadToFileOptions } from './types.js';

/**
 * Streams a body into `<dir>/.<name>.<random>.part`, then renames it over `path`, so a reader
 * never sees a half-written file and a failed download leaves nothing behind.
 */
export async function streamToFile(
  body: ReadableStream<Uint8Array>,
  path: string,
  expectedBytes: number | null,
  opts: DownloadToFileOptions = {},
): Promise<number> {
  const temp = join(dirname(path), `.${basename(path)}.${nodeCrypto().randomBytes(6).toString('hex')}.part`);
  let received = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      opts.onProgress?.(received, expectedBytes);
      done(null, chunk);
    },
  });
  try {
    opts.onProgress?.(0, expectedBytes);
    await pipeline(Readable.fromWeb(body as NodeReadableStream<Uint8Array>), count, createWriteStream(temp));
    if (expectedBytes !== null && received !== expectedBytes) {
      throw new CairnError({
        code: 'invalid_response',
        message: `Download ended after ${received} of ${expectedBytes} bytes.`,
        status: 0,
      });
    }
    await rename(temp, path);
    return received;
  } catch (err) {
    await rm(temp, { force: true });
    // Local file-system failures (permissions, disk full) are not the API's; pass them on as they are.
    if (err instanceof CairnError || (err as NodeJS.ErrnoException).syscall) throw err;
    throw new CairnError({
      code: 'network_error',
      message: `Download failed: ${(err as Error).message}`,
      status: 0,
      cause: err,
    });
  }
}
