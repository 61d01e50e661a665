import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CairnClient, type CairnClientOptions } from 'cairn-store-sdk';
import type { TestServer } from '../helpers/server.js';

/** Helpers shared by the SDK suites (test/client). */

export const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
export const ART_ID = /^art_[A-Za-z0-9]{16}$/;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function clientFor(s: TestServer, opts: Partial<CairnClientOptions> = {}): CairnClient {
  return new CairnClient({ apiKey: s.apiKey, baseUrl: s.apiUrl, ...opts });
}

/** A temp folder with `write(name, content)`; `remove()` in afterAll. */
export async function tempFolder() {
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-sdk-'));
  return {
    dir,
    async write(name: string, content: string | Uint8Array): Promise<string> {
      const file = path.join(dir, name);
      await writeFile(file, content);
      return file;
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Runs `fn` expecting a rejection, and returns the error for field checks. */
export async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** A fetch that counts requests per path, passing everything to the real fetch. */
export function countingFetch(): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  const counted: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push(`${init?.method ?? 'GET'} ${url.pathname}${url.search}`);
    return fetch(input, init);
  };
  return { fetch: counted, calls };
}
