import { stat } from 'node:fs/promises';
import path from 'node:path';
import { type ArtifactRecord, artifactIdOfUploadUrl, CairnError, type UploadOptions } from 'cairn-store-sdk';
import type { Ctx } from './context.js';
import { formatBytes } from './format.js';
import { createProgress, type Progress } from './progress.js';
import type { PushInput } from './push-inputs.js';
import {
  type FileIdentity,
  forgetUpload,
  pruneStaleUploads,
  readSavedUpload,
  saveUpload,
  uploadStateDir,
  uploadStateFile,
} from './upload-state.js';

export interface Pushed {
  record: ArtifactRecord;
  /** The upload replayed an earlier, still live, artifact. */
  replayed: boolean;
  /** The artifact as GET returns it (with `page`), when it was fetched: to check a replay, or at the end of a resumable upload. */
  current: ArtifactRecord | null;
}

/**
 * How one attempt at a file ended: stored (or replayed, live), or its key replays an upload that is
 * gone. `successorOf` is what the next key is derived from (the same on every re-run); `deadId`
 * is the gone artifact, when known.
 */
export type Attempt = Pushed | { gone: CairnError; successorOf: string; deadId: string | null };

/**
 * The server refuses a creation whose key names a gone upload (404) without saying which: the
 * next key of a resumable push is derived from this marker, which every re-run finds alike.
 */
const GONE_UPLOAD = 'tus-upload-gone';

/**
 * A resumable (tus) upload, its URL kept in a state file (upload-state.ts) from before the first
 * byte until the artifact is made, so that the same push after an interruption goes on from the
 * server's offset. With --no-resume a saved upload is abandoned (terminated) and forgotten first.
 */
export async function sendResumable(
  ctx: Ctx,
  input: PushInput,
  upload: UploadOptions,
  key: string,
  { resume, chunkSize }: { resume: boolean; chunkSize: number },
): Promise<Attempt> {
  await pruneStaleUploads(uploadStateDir());
  const state = input.temporary ? null : await stateFileOf(input.file);
  let saved = state ? await readSavedUpload(state.path) : null;
  // The client's URL, without a trailing slash: `--api-url http://h/` and `http://h` are one server.
  const apiUrl = ctx.client.baseUrl;
  const sameUpload = saved !== null && saved.api_url === apiUrl && saved.idempotency_key === key;
  if (saved && !resume) {
    // Frees the bytes the server holds now rather than in 24 h; starting over does not depend on it.
    if (saved.api_url === apiUrl) {
      await ctx.client.terminateResumableUpload(saved.upload_url).catch((err: unknown) => {
        ctx.note(
          `${upload.filename}: could not abandon the earlier upload (${(err as Error).message}); it expires by itself.`,
        );
      });
    }
    if (state) await forgetUpload(state.path);
  }
  if (!resume || !sameUpload) saved = null;

  let uploadUrl = saved?.upload_url;
  let replayed = false;
  let start: number | null = null;
  const bar: { current?: Progress } = {};
  try {
    const record = await ctx.client.uploadResumable(input.file, {
      ...upload,
      idempotencyKey: key,
      uploadUrl,
      ...(Number.isFinite(chunkSize) ? { chunkSize } : {}),
      onUploadUrl: async (url) => {
        uploadUrl = url;
        if (state) {
          await saveUpload(state.path, {
            upload_url: url,
            api_url: apiUrl,
            idempotency_key: key,
            file: state.id.file,
            size: state.id.size,
            mtime_ms: state.id.mtimeMs,
            created_at: new Date().toISOString(),
          });
        }
      },
      onResponse: (r) => {
        replayed = r.replayed;
      },
      onProgress: (done, total) => {
        if (start === null) {
          start = done;
          if (total === null || done >= total) return;
          if (done > 0) ctx.note(`${upload.filename}: resuming at ${formatBytes(done)} of ${formatBytes(total)}.`);
          bar.current = createProgress(`push ${upload.filename}`, total);
        }
        bar.current?.update(done, total);
      },
    });
    bar.current?.finish();
    if (state) await forgetUpload(state.path);
    // "Already pushed" only when this run sent nothing: a replayed creation may name a half-sent upload.
    return { record, replayed: replayed && start === record.size_bytes, current: record };
  } catch (err) {
    bar.current?.abort();
    // The key's upload is gone (terminated, expired, its artifact deleted): the creation is refused
    // with 404 `not_found`, or (replayed) its HEAD or final GET answers 404/410.
    const gone =
      err instanceof CairnError &&
      (err.code === 'not_found' || (replayed && (err.status === 404 || err.status === 410)));
    if (gone) {
      if (state) await forgetUpload(state.path);
      const deadId = replayed && uploadUrl ? artifactIdOfUploadUrl(uploadUrl) : null;
      return { gone: err, successorOf: GONE_UPLOAD, deadId };
    }
    throw err;
  }
}

/** The state file of this version of the file (its absolute path, size and mtime). */
async function stateFileOf(file: string): Promise<{ path: string; id: FileIdentity }> {
  const absolute = path.resolve(file);
  const s = await stat(absolute);
  const id = { file: absolute, size: s.size, mtimeMs: s.mtimeMs };
  return { path: uploadStateFile(uploadStateDir(), id), id };
}
