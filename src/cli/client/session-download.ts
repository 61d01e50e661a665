import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type ArchiveFormat, type ArtifactRecord, sha256File } from 'cairn-store-sdk';
import { assignEntryNames, MANIFEST_NAME } from '../../shared/archive-names.js';
import { UsageError } from '../usage-error.js';
import type { Ctx } from './context.js';
import { formatBytes } from './format.js';
import { createProgress, type Progress } from './progress.js';

/** Signed URLs asked for in one call (the API's batch limit). */
const BATCH = 20;

/**
 * `cairn download --session ID`: the whole session, as one archive file (`--zip`/`--tar`, one
 * streamed download) or into a folder (default `./<session>`), file by file under the names the
 * archive gives them (src/shared/archive-names.ts), with its manifest.json. A file already there
 * with the right SHA-256 is skipped, so an interrupted download resumes where it stopped; each
 * file is written through a temporary file, so none is ever half there.
 */
export async function downloadSession(ctx: Ctx, sessionId: string, opts: Record<string, unknown>): Promise<void> {
  const zip = opts.zip as string | undefined;
  const tar = opts.tar as string | undefined;
  if (zip !== undefined && tar !== undefined) throw new UsageError('Give --zip FILE or --tar FILE, not both.');
  if ((zip ?? tar) !== undefined) {
    if (opts.output !== undefined)
      throw new UsageError('--output is the folder of a folder download; --zip/--tar name the file.');
    return downloadArchive(
      ctx,
      sessionId,
      (zip ?? tar) as string,
      zip !== undefined ? 'zip' : 'tar.gz',
      opts.force === true,
    );
  }
  return downloadFolder(ctx, sessionId, (opts.output as string | undefined) ?? sessionId);
}

async function downloadArchive(ctx: Ctx, sessionId: string, file: string, format: ArchiveFormat, force: boolean) {
  const existing = await stat(file).catch(() => null);
  if (existing?.isDirectory()) throw new UsageError(`${file} is a folder.`);
  if (existing && !force) throw new UsageError(`${file} already exists; pass --force to overwrite it.`);
  const bar: { current?: Progress } = {};
  const result = await ctx.client
    .downloadSessionArchive(sessionId, file, {
      format,
      onProgress: (received, total) => {
        bar.current ??= createProgress(`download ${path.basename(file)}`, total);
        bar.current.update(received, total);
      },
    })
    .catch((err: unknown) => {
      bar.current?.abort();
      throw err;
    });
  bar.current?.finish();
  const { archive } = result;
  if (ctx.json) {
    return ctx.printJson({
      session_id: sessionId,
      path: path.resolve(result.path),
      format,
      artifact_count: archive.artifact_count,
      size_bytes: result.sizeBytes,
    });
  }
  ctx.print(
    `Saved ${ctx.paint('bold', result.path)} (${archive.artifact_count} files, ${formatBytes(result.sizeBytes)}).`,
  );
}

async function downloadFolder(ctx: Ctx, sessionId: string, folder: string): Promise<void> {
  const existing = await stat(folder).catch(() => null);
  if (existing && !existing.isDirectory()) throw new UsageError(`${folder} exists and is not a folder.`);
  const records: ArtifactRecord[] = [];
  for await (const r of ctx.client.iterateArtifacts({ sessionId, limit: 200 })) records.push(r);
  if (records.length === 0) {
    // Unknown session (or another tenant's): the API's own answer, from the archive call.
    await ctx.client.getSessionArchiveUrl(sessionId);
  }
  records.reverse(); // oldest first, as in the archive
  const names = assignEntryNames(records.map((r) => ({ id: r.artifact_id, filename: r.filename })));
  await mkdir(folder, { recursive: true });

  // Files already there with the right bytes are kept: what an earlier run finished.
  const todo: { record: ArtifactRecord; target: string }[] = [];
  let skipped = 0;
  for (const [i, record] of records.entries()) {
    const target = path.join(folder, names[i] as string);
    if (await sameBytes(target, record)) skipped++;
    else todo.push({ record, target });
  }
  const total = todo.reduce((n, t) => n + t.record.size_bytes, 0);
  const progress = createProgress(`download ${sessionId}`, total);
  let done = 0;
  try {
    for (let i = 0; i < todo.length; i += BATCH) {
      const batch = todo.slice(i, i + BATCH);
      const { download_urls } = await ctx.client.downloadUrls(batch.map((t) => t.record.artifact_id));
      for (const [j, item] of download_urls.entries()) {
        const { record, target } = batch[j] as (typeof batch)[number];
        if ('error' in item) {
          // Deleted or expired since the list: not in the session any more.
          ctx.note(`skipped ${names[records.indexOf(record)]}: ${item.error.code}`);
          continue;
        }
        const before = done;
        await ctx.client.archiveToFile(item.download_url, target, {
          onProgress: (received) => progress.update(before + received, total),
        });
        done = before + record.size_bytes;
      }
    }
  } catch (err) {
    progress.abort();
    throw err;
  }
  progress.finish();
  await writeFile(path.join(folder, MANIFEST_NAME), manifest(sessionId, records, names));
  const result = {
    session_id: sessionId,
    path: path.resolve(folder),
    artifact_count: records.length,
    downloaded: todo.length,
    skipped,
    size_bytes: done,
  };
  if (ctx.json) return ctx.printJson(result);
  ctx.print(
    `Saved ${records.length} files in ${ctx.paint('bold', folder)} (${todo.length} downloaded, ${formatBytes(done)}; ` +
      `${skipped} already there).`,
  );
}

/** Whether `target` holds exactly the artifact's bytes (size first, then SHA-256). */
async function sameBytes(target: string, record: ArtifactRecord): Promise<boolean> {
  const s = await stat(target).catch(() => null);
  if (!s?.isFile() || s.size !== record.size_bytes) return false;
  return (await sha256File(target)) === record.content_hash;
}

/** The same manifest.json an archive of the session carries. */
function manifest(sessionId: string, records: ArtifactRecord[], names: string[]): string {
  const body = {
    manifest_version: 1,
    created_at: new Date().toISOString(),
    session_id: sessionId,
    artifact_count: records.length,
    size_bytes: records.reduce((n, r) => n + r.size_bytes, 0),
    entries: records.map((r, i) => ({
      path: names[i],
      artifact_id: r.artifact_id,
      filename: r.filename,
      content_type: r.content_type,
      size_bytes: r.size_bytes,
      sha256: r.content_hash,
      metadata: r.metadata,
      session_id: r.session_id,
      agent_id: r.agent_id,
      created_at: r.created_at,
      expires_at: r.expires_at,
    })),
  };
  return `${JSON.stringify(body, null, 2)}\n`;
}
