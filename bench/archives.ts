import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeRandomFile } from './big-files.js';
import type { CairnChildInfo } from './cairn-child.js';
import type { BenchChild } from './ipc.js';
import { type ResultRow, ratio } from './report.js';
import { apiCall, download, mbPerSec, uploadMultipart } from './transfer.js';

const MIB = 1024 * 1024;

export interface ArchiveBenchSizes {
  smallFiles: number;
  smallBytes: number;
  bigFiles: number;
  bigBytes: number;
}

interface Listed {
  artifacts: { artifact_id: string; size_bytes: number }[];
  next_cursor: string | null;
}

/** A whole session in one download (GET /v1/sessions/{id}/archive, then its signed URL), timed. */
async function viaArchive(apiUrl: string, key: string, session: string, format: 'zip' | 'tar.gz') {
  const started = performance.now();
  const res = await fetch(`${apiUrl}/v1/sessions/${session}/archive?format=${format}`, {
    redirect: 'manual',
    headers: { authorization: `Bearer ${key}` },
  });
  if (res.status !== 303) throw new Error(`archive of ${session}: ${res.status} ${await res.text()}`);
  const { archive_url } = (await res.json()) as { archive_url: string };
  const got = await download(archive_url);
  if (got.value.status !== 200) throw new Error(`archive download: ${got.value.status}`);
  return { ms: performance.now() - started, bytes: got.value.bytes };
}

/**
 * The same files fetched one by one, as a script without archives does: the session's list
 * (pages of 200), then for each file its download URL and its bytes, one after another.
 */
async function oneByOne(apiUrl: string, key: string, session: string) {
  const started = performance.now();
  let bytes = 0;
  let cursor: string | null = null;
  do {
    const page: Listed = await apiCall<Listed>(
      apiUrl,
      key,
      'GET',
      `/v1/artifacts?session_id=${session}&limit=200${cursor ? `&cursor=${cursor}` : ''}`,
    );
    for (const a of page.artifacts) {
      const { download_url } = await apiCall<{ download_url: string }>(
        apiUrl,
        key,
        'GET',
        `/v1/artifacts/${a.artifact_id}/download-url`,
      );
      bytes += (await download(download_url)).value.bytes;
    }
    cursor = page.next_cursor;
  } while (cursor);
  return { ms: performance.now() - started, bytes };
}

/**
 * The archive rows: a session of many small files and one of a few large ones, each downloaded
 * as one zip and, in the same run, file by file; the figure is how many times faster the archive
 * is (above 1× it is faster). Best of `rounds` turns, the two ways alternating.
 */
export async function archiveRows(
  cairn: BenchChild<CairnChildInfo>,
  key: string,
  scratch: string,
  sizes: ArchiveBenchSizes,
  rounds: number,
  log: (s: string) => void,
): Promise<ResultRow[]> {
  const { apiUrl } = cairn.info;
  log(`archives: storing ${sizes.smallFiles} small files and ${sizes.bigFiles} large ones`);
  const small = `bench-small-${randomBytes(3).toString('hex')}`;
  const queue = Array.from({ length: sizes.smallFiles }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const content = Buffer.concat([Buffer.from(`${i}\n`), randomBytes(sizes.smallBytes)]).subarray(
          0,
          sizes.smallBytes,
        );
        await apiCall(apiUrl, key, 'POST', '/v1/artifacts', {
          filename: `file-${i}.txt`,
          content: content.toString('base64'),
          session_id: small,
        });
      }
    }),
  );
  const big = `bench-big-${randomBytes(3).toString('hex')}`;
  const source = path.join(scratch, 'archive-source.bin');
  await writeRandomFile(source, sizes.bigBytes);
  try {
    for (let i = 0; i < sizes.bigFiles; i++) {
      const prefix = Buffer.alloc(16);
      prefix.writeUInt32BE(i, 0);
      const sent = await uploadMultipart(
        apiUrl,
        key,
        source,
        sizes.bigBytes - 16,
        `part-${i}.bin`,
        { session_id: big },
        prefix,
      );
      if (sent.value.status !== 201) throw new Error(`upload ${i}: ${sent.value.status} ${sent.value.body}`);
    }
  } finally {
    await rm(source, { force: true });
  }

  const rows: ResultRow[] = [];
  for (const [session, label, files, each] of [
    [small, 'small', sizes.smallFiles, sizes.smallBytes],
    [big, 'large', sizes.bigFiles, sizes.bigBytes],
  ] as const) {
    let bestArchive = { ms: Number.POSITIVE_INFINITY, bytes: 0 };
    let bestSingles = { ms: Number.POSITIVE_INFINITY, bytes: 0 };
    for (let r = 0; r < rounds; r++) {
      log(`archives: ${label} files, round ${r + 1}: archive, then one by one`);
      const a = await viaArchive(apiUrl, key, session, 'zip');
      log(`archives: ${label} archive ${a.bytes} bytes in ${a.ms.toFixed(0)} ms`);
      if (a.ms < bestArchive.ms) bestArchive = a;
      const o = await oneByOne(apiUrl, key, session);
      if (o.ms < bestSingles.ms) bestSingles = o;
    }
    const size = each >= MIB ? `${each / MIB} MiB` : `${each / 1024} KiB`;
    rows.push({
      name: `session archive (zip), ${files.toLocaleString('en-US')} × ${size}`,
      cairn: `${(bestArchive.ms / 1000).toFixed(2)} s, ${mbPerSec(bestArchive.bytes, bestArchive.ms).toFixed(0)} MB/s, 1 API call`,
      baseline: `one by one (list, then download-url + GET each): ${(bestSingles.ms / 1000).toFixed(2)} s, ${files + Math.ceil(files / 200)} API calls`,
      figure: ratio(bestSingles.ms / bestArchive.ms),
      target: label === 'small' ? '≥ 1× (faster)' : '≥ 0.7× of one by one',
      pass: label === 'small' ? bestSingles.ms >= bestArchive.ms : bestSingles.ms / bestArchive.ms >= 0.7,
    });
  }
  return rows;
}
