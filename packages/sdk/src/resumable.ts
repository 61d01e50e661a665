import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CairnError } from './errors.js';
import { type Answer, retryWaitMs, type Transport } from './transport.js';
import type { ArtifactRecord, ProgressFn, ResumableSupport, ResumableUploadOptions } from './types.js';
import { uploadFields } from './uploads.js';

/**
 * Resumable uploads over Cairn's tus 1.0.0 endpoint (creation, HEAD, PATCH, termination). The
 * server keeps every byte that reached it, even from a PATCH whose connection dropped, so after
 * any failure a HEAD says where to go on from, in this process or in a later one (`uploadUrl`).
 * An upload URL is only ever used for its id: every request goes to the client's own base URL.
 */

export const TUS_PATH = '/v1/uploads/tus';
const TUS_HEADERS = { 'tus-resumable': '1.0.0' } as const;
const OFFSET_BODY = 'application/offset+octet-stream';

/** `Upload-Metadata`: comma-separated `key base64(value)` pairs, unset values left out. */
export function tusMetadata(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([key, value]) => `${key} ${Buffer.from(value, 'utf8').toString('base64')}`)
    .join(',');
}

/** An upload as this client addresses it: the URL it was given (for messages), its API path and id. */
interface UploadTarget {
  url: string;
  path: string;
  id: string;
}

/**
 * Where the client sends an upload's HEAD, PATCH and DELETE: `/v1/uploads/tus/<id>` on its own
 * configured base URL, whatever origin the given URL names, so the API key only ever goes to that
 * origin (not to one a saved URL, a caller or a `Location` header names). A Location naming a
 * public origin while the client talks to an internal one works the same. Throws a TypeError for
 * a URL whose path is not `…/v1/uploads/tus/<id>`.
 */
function uploadTarget(uploadUrl: string): UploadTarget {
  let pathname: string;
  try {
    pathname = new URL(uploadUrl).pathname.replace(/\/+$/, '');
  } catch {
    throw new TypeError(`Not a Cairn upload URL (…${TUS_PATH}/<id>): ${uploadUrl}`);
  }
  const cut = pathname.lastIndexOf('/');
  const segment = pathname.slice(cut + 1);
  let id = '';
  try {
    id = decodeURIComponent(segment);
  } catch {
    // A malformed %-escape: refused below like any other path that names no upload.
  }
  if (id === '' || !pathname.slice(0, cut).endsWith(TUS_PATH)) {
    throw new TypeError(`Not a Cairn upload URL (…${TUS_PATH}/<id>): ${uploadUrl}`);
  }
  return { url: uploadUrl, path: `${TUS_PATH}/${encodeURIComponent(id)}`, id };
}

/** What `OPTIONS /v1/uploads/tus` offers; null when the server has no tus endpoint (404: an older Cairn). */
export async function resumableSupport(http: Transport): Promise<ResumableSupport | null> {
  let res: Answer;
  try {
    res = await http.send({ method: 'OPTIONS', path: TUS_PATH, headers: TUS_HEADERS, auth: false, idempotent: true });
  } catch (err) {
    if (err instanceof CairnError && err.status === 404) return null;
    throw err;
  }
  await res.body?.cancel();
  const list = (name: string) =>
    (res.headers.get(name) ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  // Anything that answers without speaking tus 1.0.0 is no tus server for this client.
  if (!list('tus-version').includes('1.0.0')) return null;
  const max = Number(res.headers.get('tus-max-size'));
  return {
    version: '1.0.0',
    extensions: list('tus-extension'),
    maxSize: Number.isSafeInteger(max) && max > 0 ? max : null,
    checksumAlgorithms: list('tus-checksum-algorithm'),
  };
}

/** DELETE (tus termination): the upload and its bytes go. An upload already gone (404) is no error. */
export async function terminateResumable(http: Transport, uploadUrl: string): Promise<void> {
  const { path } = uploadTarget(uploadUrl);
  try {
    const res = await http.send({
      method: 'DELETE',
      path,
      headers: TUS_HEADERS,
      idempotent: true,
    });
    await res.body?.cancel();
  } catch (err) {
    if (err instanceof CairnError && err.status === 404) return;
    throw err;
  }
}

/**
 * Creates the upload (or picks up `opts.uploadUrl`), sends the file from the server's offset, and
 * returns the artifact. A dropped connection, 5xx, 409 (offset conflict) or 429 is followed by a
 * HEAD and the rest from the server's offset; `1 + maxRetries` attempts in a row without progress
 * give up (progress resets the count, so a long upload over a flaky link keeps going).
 */
export async function uploadResumable(
  http: Transport,
  path: string,
  opts: ResumableUploadOptions,
): Promise<ArtifactRecord> {
  const chunkSize = pieceSize(opts.chunkSize);
  const size = (await stat(path)).size;
  const progress = monotone(opts.onProgress);
  let target: UploadTarget | null = null;
  let offset = 0;
  if (opts.uploadUrl !== undefined) {
    const given = uploadTarget(opts.uploadUrl);
    // A URL the server no longer knows (expired after 24 h, terminated) means a new upload.
    const at = await uploadOffset(http, given, size).catch((err: unknown) => {
      if (isGone(err)) return null;
      throw err;
    });
    if (at !== null) {
      target = given;
      offset = at;
    }
  }
  if (target === null) {
    const created = await createUpload(http, path, size, opts);
    target = created.target;
    await opts.onUploadUrl?.(target.url);
    opts.onResponse?.({ replayed: created.replayed });
    // A replayed creation names an earlier upload, which may be partly or wholly sent (or gone: 404).
    offset = created.replayed ? await uploadOffset(http, target, size) : 0;
  }
  progress(offset, size);
  await sendFrom(http, target, path, size, offset, progress, chunkSize);
  return http.json<ArtifactRecord>({
    method: 'GET',
    path: `/v1/artifacts/${encodeURIComponent(target.id)}`,
    idempotent: true,
  });
}

/** `POST /v1/uploads/tus`: retried on 5xx/network only with an idempotency key (else it could make two uploads). */
async function createUpload(
  http: Transport,
  path: string,
  size: number,
  opts: ResumableUploadOptions,
): Promise<{ target: UploadTarget; replayed: boolean }> {
  const headers: Record<string, string> = {
    ...TUS_HEADERS,
    'upload-length': String(size),
    'upload-metadata': tusMetadata(uploadFields(opts, opts.filename ?? basename(path))),
  };
  const key = opts.idempotencyKey;
  if (key !== undefined) headers['idempotency-key'] = key;
  let res: Answer;
  try {
    res = await http.send({ method: 'POST', path: TUS_PATH, headers, idempotent: key !== undefined });
  } catch (err) {
    // The key names an upload (of the last 24 h) that is no more: terminated, expired, or finished
    // and its artifact deleted. The server will not make another under the same key.
    if (key !== undefined && err instanceof CairnError && err.status === 404) {
      throw new CairnError({
        code: err.code,
        message: `The upload made with Idempotency-Key ${key} is gone (terminated, expired, or its artifact deleted); upload again under another key.`,
        status: 404,
        requestId: err.requestId,
      });
    }
    throw err;
  }
  await res.body?.cancel();
  const location = res.headers.get('location');
  if (!location) {
    throw new CairnError({
      code: 'invalid_response',
      message: `POST ${TUS_PATH} answered ${res.status} without a Location.`,
      status: res.status,
    });
  }
  // Absolute by the contract; resolved against the endpoint as tus clients do, should a proxy shorten it.
  const url = new URL(location, http.config.baseUrl + TUS_PATH).href;
  let target: UploadTarget;
  try {
    target = uploadTarget(url);
  } catch {
    throw new CairnError({
      code: 'invalid_response',
      message: `POST ${TUS_PATH} answered ${res.status} with a Location that names no upload: ${location}`,
      status: res.status,
      requestId: res.headers.get('x-request-id'),
    });
  }
  return { target, replayed: res.headers.get('idempotent-replayed') === 'true' };
}

/** HEAD: the server's offset. 404 (no body on HEAD) becomes `not_found`; a different length is refused. */
async function uploadOffset(http: Transport, { url, path }: UploadTarget, size: number): Promise<number> {
  let res: Answer;
  try {
    res = await http.send({ method: 'HEAD', path, headers: TUS_HEADERS, idempotent: true });
  } catch (err) {
    if (err instanceof CairnError && err.status === 404) {
      throw new CairnError({
        code: 'not_found',
        message: `The upload ${url} is unknown to the server (expired, terminated, or another account's).`,
        status: 404,
        requestId: err.requestId,
      });
    }
    throw err;
  }
  const offset = headerInt(res, 'upload-offset', 'HEAD');
  const length = res.headers.get('upload-length');
  if (length !== null && Number(length) !== size) {
    // Local: the caller resumes an upload of other bytes. Nothing to retry.
    throw new Error(`The upload ${url} is ${length} bytes long, the file ${size}: it is not this file's upload.`);
  }
  return offset;
}

/** PATCHes from `start` until the server has every byte, going on from its offset after a failure. */
async function sendFrom(
  http: Transport,
  target: UploadTarget,
  path: string,
  size: number,
  start: number,
  progress: (done: number, total: number) => void,
  chunkSize: number,
): Promise<void> {
  let offset = start;
  // Failures in a row that moved the server's offset no further.
  let fruitless = 0;
  // Time spent waiting for another request's hold on the upload to end, since the last progress.
  let heldFor = 0;
  while (offset < size) {
    const localError: { error?: Error } = {};
    try {
      const end = Math.min(size, offset + chunkSize);
      const next = await patchFrom(http, target, { path, size, offset, end }, progress, localError);
      if (next <= offset || next > size) {
        throw new CairnError({
          code: 'invalid_response',
          message: `PATCH from byte ${offset} of ${size} answered Upload-Offset ${next}.`,
          status: 204,
        });
      }
      offset = next;
      fruitless = 0;
      heldFor = 0;
    } catch (err) {
      // The file itself failed (unreadable, changed size): no retry mends that.
      if (localError.error) throw localError.error;
      if (!retryable(err)) throw err;
      // A 409 at the server's own offset: another PATCH holds the upload, perhaps one of a server
      // that crashed, whose hold lapses by itself within seconds. Waited out, not counted.
      const held = isConflict(err) && heldFor < MAX_HELD_WAIT_MS;
      if (!held && fruitless >= http.config.maxRetries) throw err;
      const wait = held ? HELD_RETRY_MS : retryWaitMs(err, fruitless);
      await sleep(wait);
      const now = await uploadOffset(http, target, size);
      if (now > offset) {
        fruitless = 0;
        heldFor = 0;
      } else if (held && now === offset) heldFor += wait;
      else fruitless++;
      offset = now;
    }
  }
}

/** Bytes `offset` to `end` (exclusive) of a file of `size` bytes: one PATCH's body. */
interface Piece {
  path: string;
  size: number;
  offset: number;
  end: number;
}

/** `chunkSize` as a whole number of bytes per PATCH; none: the rest of the file in one. */
function pieceSize(chunkSize: number | undefined): number {
  if (chunkSize === undefined) return Number.POSITIVE_INFINITY;
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) {
    throw new TypeError(`chunkSize must be a whole number of bytes, at least 1 (got ${chunkSize}).`);
  }
  return chunkSize;
}

/** One PATCH of a piece; the server's new offset. */
async function patchFrom(
  http: Transport,
  target: UploadTarget,
  piece: Piece,
  progress: (done: number, total: number) => void,
  localError: { error?: Error },
): Promise<number> {
  const { offset, end } = piece;
  const res = await http.send({
    method: 'PATCH',
    path: target.path,
    headers: { ...TUS_HEADERS, 'upload-offset': String(offset) },
    stream: {
      contentType: OFFSET_BODY,
      contentLength: end - offset,
      // Never re-sent by the transport: a retry starts from the server's offset (sendFrom).
      reopenable: false,
      open: async () => fileFrom(piece, progress, localError),
    },
    idempotent: false,
  });
  await res.body?.cancel();
  return headerInt(res, 'upload-offset', 'PATCH');
}

/** A piece of the file, read as it is sent (memory stays flat), reporting progress. */
async function* fileFrom(
  { path, size, offset, end }: Piece,
  progress: (done: number, total: number) => void,
  localError: { error?: Error },
): AsyncGenerator<Uint8Array> {
  let at = offset;
  try {
    // The last piece is read to the file's end, so a file that grew is noticed.
    const range = end < size ? { start: offset, end: end - 1 } : { start: offset };
    for await (const chunk of createReadStream(path, range)) {
      const bytes = chunk as Buffer;
      at += bytes.length;
      if (at > end) throw new Error(`${path} grew while it was being uploaded (expected ${size} bytes).`);
      yield bytes;
      progress(at, size);
    }
    if (at !== end) throw new Error(`${path} is shorter than ${size} bytes now: it changed while being uploaded.`);
  } catch (err) {
    localError.error = err as Error;
    throw err;
  }
}

/**
 * How long a 409 conflict at the server's offset is waited out (it renews a live PATCH's hold every
 * 2 s and lets a dead one's lapse after 8 s), and how often it is tried meanwhile.
 */
const MAX_HELD_WAIT_MS = 30_000;
const HELD_RETRY_MS = 1_000;

function isConflict(err: CairnError): boolean {
  return err.status === 409 && err.code === 'upload_offset_conflict';
}

/** Worth a HEAD and another PATCH: no answer, a server error, a concurrent PATCH / offset conflict, a rate limit. */
function retryable(err: unknown): err is CairnError {
  if (!(err instanceof CairnError)) return false;
  return err.status === 0 || err.status >= 500 || err.status === 429 || isConflict(err);
}

function isGone(err: unknown): boolean {
  return err instanceof CairnError && err.status === 404;
}

function headerInt(res: Answer, name: string, method: string): number {
  const raw = res.headers.get(name);
  const n = raw === null ? Number.NaN : Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new CairnError({
      code: 'invalid_response',
      message: `${method} answered ${res.status} with ${name}: ${raw ?? '(none)'}.`,
      status: res.status,
      requestId: res.headers.get('x-request-id'),
    });
  }
  return n;
}

/**
 * Bytes handed to the socket are counted before the server confirms them; after a drop the
 * server's offset can be lower. The callback never goes back: it waits until the bytes catch up.
 */
function monotone(onProgress: ProgressFn | undefined): (done: number, total: number) => void {
  let high = -1;
  return (done, total) => {
    if (!onProgress || done <= high) return;
    high = done;
    onProgress(done, total);
  };
}
