import { copyFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ArtifactRecord, deriveIdempotencyKey, sha256File, type UploadOptions } from 'cairn-store-sdk';
import { UsageError } from '../usage-error.js';
import type { Ctx } from './context.js';
import { formatBytes } from './format.js';

/**
 * Pushes a copy of an agent's transcript file (its host may still be appending to it: the
 * upload's declared length must hold), under a key derived from the copy's content and the
 * upload's fields, so that capturing the same transcript twice stores one artifact. `metadata`
 * is computed from the copy, so it describes the very bytes stored.
 */
export async function pushTranscriptCopy(
  ctx: Ctx,
  file: string,
  upload: (copy: string) => Promise<UploadOptions & { filename: string }>,
): Promise<ArtifactRecord> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-capture-'));
  try {
    const copy = path.join(dir, 'transcript.jsonl');
    try {
      // Only regular files: a FIFO or device named as a transcript would hang or read forever.
      if (!(await stat(file)).isFile()) throw new UsageError(`${file} is not a regular file.`);
      await copyFile(file, copy);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      throw new UsageError(`cannot read the transcript ${file}: ${code ?? err}`);
    }
    const options = { ...(await upload(copy)), transcript: true };
    const key = deriveIdempotencyKey({
      contentHash: await sha256File(copy),
      filename: options.filename,
      sessionId: options.sessionId,
      agentId: options.agentId,
      contentType: options.contentType,
      transcript: true,
      metadata: options.metadata,
    });
    return await ctx.client.uploadFile(copy, { ...options, idempotencyKey: key });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The metadata of a captured transcript: how it was captured, and the models read from it by
 * Claude Code's rule (`model` the last main-loop model, marked `model_source=transcript`;
 * `models_used` every one, sorted), when it names any.
 */
export function capturedMetadata(
  capture: 'end' | 'snapshot',
  found: { model: string | null; modelsUsed: string[] },
): Record<string, unknown> {
  const metadata: Record<string, unknown> = { capture };
  if (found.model) Object.assign(metadata, { model: found.model, model_source: 'transcript' });
  if (found.modelsUsed.length > 0) metadata.models_used = found.modelsUsed.join(',');
  return metadata;
}

/** The stored record: as JSON with --json, else one line (id, filename, size, session). */
export function printCaptured(ctx: Ctx, record: ArtifactRecord): void {
  if (ctx.json) ctx.printJson(record);
  else {
    ctx.print(
      `${ctx.paint('cyan', record.artifact_id)}  ${record.filename}  ${formatBytes(record.size_bytes)}  ${ctx.paint('dim', `session ${record.session_id}`)}`,
    );
  }
}
