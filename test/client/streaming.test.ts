import { execFile } from 'node:child_process';
import { open, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { sha256File } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempFolder } from './fixtures.js';

/**
 * A 300 MB upload, download and resumable upload through the SDK in a child process with a 64 MB
 * heap, sampling its RSS: the file must stream, never sit in memory. The child runs the SDK package compiled
 * from packages/sdk/src into a temp folder, so the test does not depend on a prior build.
 */

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const SIZE = 300 * 1024 * 1024;
const MB = 1024 * 1024;

let s: TestServer;
let tmp: Awaited<ReturnType<typeof tempFolder>>;

beforeAll(async () => {
  s = await startTestServer();
  tmp = await tempFolder();
  const sdk = path.join(tmp.dir, 'sdk');
  await run(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      ...['--outDir', sdk, '--rootDir', path.join(ROOT, 'packages/sdk/src')],
      ...['--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'],
      ...['--types', 'node', '--skipLibCheck', '--strict'],
      path.join(ROOT, 'packages/sdk/src/index.ts'),
    ],
    { cwd: ROOT },
  );
  await writeFile(path.join(sdk, 'package.json'), '{"type":"module"}');
  await writeFile(path.join(tmp.dir, 'child.mjs'), CHILD);
}, 120_000);

afterAll(async () => {
  await s?.close();
  await tmp?.remove();
});

const CHILD = `
import { CairnClient } from './sdk/index.js';
const [apiUrl, apiKey, file, out] = process.argv.slice(2);
const rss = () => process.memoryUsage().rss;
const base = rss();
let peak = base;
const timer = setInterval(() => { peak = Math.max(peak, rss()); }, 10);
const client = new CairnClient({ apiKey, baseUrl: apiUrl });
let progressCalls = 0;
const rec = await client.uploadFile(file, { onProgress: () => { progressCalls++; } });
const uploadPeak = Math.max(peak, rss());
const dl = await client.downloadToFile(rec.artifact_id, out);
peak = Math.max(peak, rss());
const tusRec = await client.uploadResumable(file, { filename: 'big-resumable.bin' });
peak = Math.max(peak, rss());
clearInterval(timer);
process.stdout.write(JSON.stringify({ rec, dl, tusRec, base, uploadPeak, peak, progressCalls }));
`;

/** A sparse 300 MB file with a few random blocks, so its hash is not just that of zeros. */
async function makeBigFile(file: string): Promise<void> {
  const fh = await open(file, 'w');
  try {
    await fh.truncate(SIZE);
    for (const at of [0, 77 * MB + 13, SIZE - 4096]) {
      const block = Buffer.from(Array.from({ length: 4096 }, () => Math.floor(Math.random() * 256)));
      await fh.write(block, 0, block.length, at);
    }
  } finally {
    await fh.close();
  }
}

describe('streaming a 300 MB file', () => {
  it('uploads and downloads with a 64 MB heap and RSS growth far below the file size', async () => {
    const file = path.join(tmp.dir, 'big.bin');
    const out = path.join(tmp.dir, 'big-copy.bin');
    await makeBigFile(file);
    const expected = await sha256File(file);

    const { stdout } = await run(
      process.execPath,
      ['--max-old-space-size=64', path.join(tmp.dir, 'child.mjs'), s.apiUrl, s.apiKey, file, out],
      { cwd: tmp.dir, maxBuffer: 1024 * 1024 },
    );
    const r = JSON.parse(stdout);
    expect(r.rec).toMatchObject({ filename: 'big.bin', size_bytes: SIZE, content_hash: expected });
    expect(r.progressCalls).toBeGreaterThan(10);
    expect(r.dl).toEqual({ path: out, sizeBytes: SIZE });
    // The resumable upload (tus PATCH) streams the file the same way.
    expect(r.tusRec).toMatchObject({ filename: 'big-resumable.bin', size_bytes: SIZE, content_hash: expected });
    expect((await stat(out)).size).toBe(SIZE);
    expect(await sha256File(out)).toBe(expected);
    // Buffering the file would add at least SIZE (300 MB); streaming stays within a few tens of MB.
    expect(r.uploadPeak - r.base).toBeLessThan(100 * MB);
    expect(r.peak - r.base).toBeLessThan(100 * MB);
  }, 240_000);
});
