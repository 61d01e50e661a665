import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import { planMultipart } from './multipart.js';
import type { StreamingBody } from './transport.js';
import type { ProgressFn, StreamBody, UploadOptions } from './types.js';
import { uploadWireFields } from './wire-fields.js';

/** The multipart text fields of an upload, in wire names. */
export function uploadFields(opts: UploadOptions, filename: string): Record<string, string | undefined> {
  const wire = uploadWireFields({ ...opts, filename });
  return {
    ...wire,
    metadata: wire.metadata === undefined ? undefined : JSON.stringify(wire.metadata),
    transcript: wire.transcript ? 'true' : undefined,
  };
}

/** The JSON (base64) upload body, in wire names. */
export function jsonUploadBody(content: Uint8Array | string, opts: UploadOptions & { filename: string }) {
  const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : Buffer.from(content);
  return { ...uploadWireFields(opts), content: bytes.toString('base64'), content_encoding: 'base64' };
}

/** A multipart body that re-opens the file on every attempt, so it can be retried. */
export async function fileMultipart(path: string, opts: UploadOptions): Promise<StreamingBody> {
  const size = (await stat(path)).size;
  const filename = opts.filename ?? basename(path);
  const plan = planMultipart({
    fields: uploadFields(opts, filename),
    filename,
    fileContentType: opts.contentType ?? 'application/octet-stream',
    fileSize: size,
  });
  return {
    contentType: plan.contentType,
    contentLength: plan.contentLength,
    reopenable: true,
    open: async () => plan.body(createReadStream(path), opts.onProgress),
  };
}

/** A multipart body over a caller's stream: it can be read once, so it is never retried. */
export function streamMultipart(body: StreamBody, opts: UploadOptions & { filename: string; size?: number }) {
  const plan = planMultipart({
    fields: uploadFields(opts, opts.filename),
    filename: opts.filename,
    fileContentType: opts.contentType ?? 'application/octet-stream',
    fileSize: opts.size ?? null,
  });
  let used = false;
  const result: StreamingBody = {
    contentType: plan.contentType,
    contentLength: plan.contentLength,
    reopenable: false,
    open: async () => {
      if (used) throw new Error('uploadStream: the body stream can be sent only once.');
      used = true;
      return plan.body(asIterable(body), opts.onProgress);
    },
  };
  return result;
}

/** A raw file body for a presigned PUT; re-opened per attempt. */
export async function fileBody(path: string, contentType: string, onProgress?: ProgressFn): Promise<StreamingBody> {
  const size = (await stat(path)).size;
  return {
    contentType,
    contentLength: size,
    reopenable: true,
    open: async () => counted(createReadStream(path), size, onProgress),
  };
}

async function* counted(source: AsyncIterable<Uint8Array>, total: number, onProgress?: ProgressFn) {
  let sent = 0;
  onProgress?.(0, total);
  for await (const chunk of source) {
    sent += chunk.length;
    yield chunk;
    onProgress?.(sent, total);
  }
}

function asIterable(body: StreamBody): AsyncIterable<Uint8Array> {
  if ('getReader' in body && typeof body.getReader === 'function') {
    return Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
  }
  return body as Readable;
}
