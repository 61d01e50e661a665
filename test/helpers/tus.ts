import type pg from 'pg';
import * as tus from 'tus-js-client';
import { eventually } from './e2e.js';

/** Upload-Metadata as tus clients send it: `key base64(value)` pairs. */
export function tusMetadata(fields: Record<string, string>): string {
  return Object.entries(fields)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
}

export interface TusRun {
  /** The upload URL (Location). */
  url: string;
  /** Upload-Offset of every PATCH the client sent, in order. */
  patchOffsets: number[];
}

/**
 * An upload with tus-js-client, the reference tus client, configured as its README shows (plus the
 * key). Resolves when it succeeds, rejects with its error otherwise.
 */
export function tusJsUpload(
  data: Buffer,
  opts: {
    endpoint: string;
    apiKey: string;
    metadata?: Record<string, string>;
    uploadUrl?: string;
    retryDelays?: number[];
    chunkSize?: number;
    uploadDataDuringCreation?: boolean;
    onProgress?: (sent: number, total: number) => void;
    onStart?: (upload: tus.Upload) => void;
    /** Told the upload URL as each PATCH starts. */
    onPatch?: (url: string) => void;
  },
): Promise<TusRun> {
  const patchOffsets: number[] = [];
  return new Promise((resolve, reject) => {
    const upload = new tus.Upload(data, {
      endpoint: opts.endpoint,
      headers: { Authorization: `Bearer ${opts.apiKey}` },
      metadata: opts.metadata ?? {},
      retryDelays: opts.retryDelays ?? [],
      ...(opts.uploadUrl ? { uploadUrl: opts.uploadUrl } : {}),
      ...(opts.chunkSize ? { chunkSize: opts.chunkSize } : {}),
      ...(opts.uploadDataDuringCreation ? { uploadDataDuringCreation: true } : {}),
      onBeforeRequest(req) {
        if (req.getMethod() !== 'PATCH') return;
        patchOffsets.push(Number(req.getHeader('Upload-Offset')));
        opts.onPatch?.(req.getURL());
      },
      ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
      onError: reject,
      onSuccess: () => resolve({ url: upload.url ?? '', patchOffsets }),
    });
    opts.onStart?.(upload);
    upload.start();
  });
}

/** One raw tus request with fetch (Tus-Resumable and the key set unless given). */
export async function tusFetch(
  url: string,
  apiKey: string | null,
  method: string,
  headers: Record<string, string> = {},
  body?: Buffer,
): Promise<{ status: number; headers: Headers; text: string; json: unknown }> {
  const res = await fetch(url, {
    method,
    headers: {
      'Tus-Resumable': '1.0.0',
      ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}),
      ...headers,
    },
    ...(body ? { body } : {}),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

/** Waits until a request (on any instance) holds the resumable upload `id`: its lease in the shared database. */
export async function untilUploadHeld(db: pg.Pool, id: string, what = 'an instance holding the upload'): Promise<void> {
  await eventually(
    async () =>
      (await db.query('SELECT lease_owner FROM resumable_uploads WHERE id = $1', [id])).rows[0]?.lease_owner != null,
    20_000,
    what,
  );
}
