import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A session of 10 files of 100 MB streams as one archive in flat server memory: the server runs
 * in this process, the uploads and the download are curl processes of their own, and this
 * process's RSS is sampled while the archive streams. Growth under 100 MB for 1 GB of archive
 * means no entry (let alone the archive) is ever held whole.
 */
const run = promisify(execFile);
const FILES = 10;
const FILE_BYTES = 100 * 1024 * 1024;
const MAX_GROWTH = 100 * 1024 * 1024;

let s: TestServer;
let dir: string;
beforeAll(async () => {
  s = await startTestServer();
  dir = await mkdtemp(path.join(tmpdir(), 'cairn-archive-memory-'));
  const chunk = randomBytes(1024 * 1024);
  for (let i = 0; i < FILES; i++) {
    // Distinct bytes per file (its index in front of each MiB), written a MiB at a time.
    const file = path.join(dir, `part-${i}.bin`);
    const fh = await open(file, 'w');
    for (let m = 0; m < FILE_BYTES / chunk.length; m++) {
      chunk.writeUInt32BE(i, 0);
      await fh.write(chunk);
    }
    await fh.close();
    await run('curl', [
      '-sS',
      '--fail-with-body',
      '-H',
      `Authorization: Bearer ${s.apiKey}`,
      '-F',
      `file=@${file}`,
      '-F',
      'session_id=big-run',
      `${s.apiUrl}/v1/artifacts`,
    ]);
    await rm(file);
  }
}, 600_000);
afterAll(async () => {
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs `fn` while sampling this process's RSS; returns how far it rose above where it started. */
async function rssGrowth(fn: () => Promise<void>): Promise<number> {
  const base = process.memoryUsage().rss;
  let peak = base;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage().rss) - base;
}

describe('a 10 × 100 MB session archive', () => {
  it.each(['zip', 'tar.gz'] as const)(
    'streams as %s in flat server memory, and unpacks whole',
    async (format) => {
      const res = await fetch(`${s.apiUrl}/v1/sessions/big-run/archive?format=${format}`, {
        redirect: 'manual',
        headers: { authorization: `Bearer ${s.apiKey}` },
      });
      const {
        archive_url: url,
        artifact_count,
        size_bytes,
      } = (await res.json()) as {
        archive_url: string;
        artifact_count: number;
        size_bytes: number;
      };
      expect({ artifact_count, size_bytes }).toEqual({ artifact_count: FILES, size_bytes: FILES * FILE_BYTES });
      const file = path.join(dir, `big.${format}`);
      let curl = { stdout: '' };
      const growth = await rssGrowth(async () => {
        curl = await run('curl', ['-sS', '--fail', '-o', file, '-w', '%{time_starttransfer} %{size_download}', url]);
      });
      const [, downloaded] = curl.stdout.split(' ');
      console.log(
        `archive ${format}: server RSS growth ${(growth / 1048576).toFixed(1)} MiB, first byte after ${curl.stdout.split(' ')[0]} s`,
      );
      expect(growth).toBeLessThan(MAX_GROWTH);
      if (format === 'zip') {
        expect(Number(downloaded)).toBe((await stat(file)).size);
        const t = await run('unzip', ['-t', file], { maxBuffer: 1 << 20 });
        expect(t.stdout).toMatch(/No errors detected in compressed data/);
      } else {
        const t = await run('tar', ['-tzvf', file], { maxBuffer: 1 << 20 });
        expect(t.stdout.trim().split('\n')).toHaveLength(FILES + 1);
      }
      await rm(file);
    },
    300_000,
  );
});
