import { createHash } from 'node:crypto';
import path from 'node:path';
import { expect } from 'vitest';
import { newArtifactId } from '../../src/core/ids.js';
import { PLANS } from '../../src/core/plans.js';
import { api, filesUnder, localBlobNames, type TestServer } from './server.js';

/** Helpers shared by the end-to-end suites (test/e2e). */

export type ApiResult = Awaited<ReturnType<typeof api>>;

/** A parsed JSON record of the API (artifact, link, session…). */
// biome-ignore lint/suspicious/noExplicitAny: wire JSON, checked field by field by the tests
export type Rec = Record<string, any>;

export const sha256 = (data: string | Buffer | Uint8Array) => createHash('sha256').update(data).digest('hex');

export const ART_ID = /^art_[A-Za-z0-9]{16}$/;
export const LINK_ID = /^lnk_[A-Za-z0-9]{20}$/;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

export interface MultipartOptions {
  content: string | Buffer;
  /** Filename of the file part; default `file.txt`. */
  filename?: string;
  /** Content-Type of the file part; default none (undici then sends application/octet-stream). */
  partType?: string;
  /** Text fields sent before the file part. */
  before?: Record<string, string>;
  /** Text fields sent after the file part. */
  after?: Record<string, string>;
  headers?: Record<string, string>;
}

export function multipartBody(opts: MultipartOptions): FormData {
  const fd = new FormData();
  for (const [k, v] of Object.entries(opts.before ?? {})) fd.append(k, v);
  const bytes = typeof opts.content === 'string' ? Buffer.from(opts.content) : opts.content;
  fd.append(
    'file',
    new Blob([new Uint8Array(bytes)], opts.partType ? { type: opts.partType } : {}),
    opts.filename ?? 'file.txt',
  );
  for (const [k, v] of Object.entries(opts.after ?? {})) fd.append(k, v);
  return fd;
}

export function uploadMultipart(base: string, key: string, opts: MultipartOptions): Promise<ApiResult> {
  return api(base, key, 'POST', '/v1/artifacts', multipartBody(opts), opts.headers ?? {});
}

export function uploadJson(
  base: string,
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<ApiResult> {
  return api(base, key, 'POST', '/v1/artifacts', body, headers);
}

/** A JSON upload of `text` with sensible defaults; fails the test unless it is a 201. */
export async function put(base: string, key: string, text: string, extra: Record<string, unknown> = {}): Promise<Rec> {
  const r = await uploadJson(base, key, {
    filename: 'note.txt',
    content: Buffer.from(text).toString('base64'),
    ...extra,
  });
  expect(r.status, r.text).toBe(201);
  return r.json;
}

/** GET of an absolute URL; the body as bytes. */
export async function fetchBytes(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

export { filesUnder };

/** A running test server's blob store (local folder or S3), or the data folder of a `cairn serve` child. */
type BlobsOf = string | Pick<TestServer, 'blobFiles' | 'stagingFiles'>;

/**
 * Stored blobs (under dataDir/blobs as files or small-blob rows, or in the server's bucket), as
 * `<tenant>/…/<sha256>` names, staging excluded.
 */
export async function blobFiles(where: BlobsOf): Promise<string[]> {
  if (typeof where !== 'string') return where.blobFiles();
  return localBlobNames(path.join(where, 'blobs'));
}

export async function stagingFiles(where: BlobsOf): Promise<string[]> {
  if (typeof where !== 'string') return where.stagingFiles();
  return filesUnder(path.join(where, 'blobs', '.staging'));
}

/** Blob files whose name is the given content hash. */
export async function blobFilesFor(where: BlobsOf, hash: string): Promise<string[]> {
  return (await blobFiles(where)).filter((f) => path.basename(f) === hash);
}

/** Asserts the `{error:{code,message,status}}` envelope with the given status and code. */
export function expectError(r: ApiResult, status: number, code: string): void {
  expect(r.status, r.text).toBe(status);
  expect(r.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(r.json).toBeTypeOf('object');
  expect(Object.keys(r.json)).toEqual(['error']);
  const e = r.json.error;
  expect(e.code).toBe(code);
  expect(e.status).toBe(status);
  expect(typeof e.message).toBe('string');
  expect(e.message.length).toBeGreaterThan(0);
  const allowed = new Set([
    'code',
    'message',
    'status',
    'retry_after_seconds',
    'retry_after',
    'upgrade_url',
    'request_id',
  ]);
  for (const k of Object.keys(e)) expect(allowed.has(k), `unexpected error field ${k}`).toBe(true);
  // The id the response carries is the one in its envelope (and in the server's log line).
  expect(e.request_id).toBe(r.headers.get('x-request-id'));
}

/**
 * An error body without its request id, which differs on every response: for comparing answers
 * that must otherwise be identical (nothing revealing which case was hit).
 */
export function withoutRequestId(body: string | Rec): Rec {
  const json = (typeof body === 'string' ? JSON.parse(body) : body) as Rec;
  return json?.error ? { ...json, error: { ...json.error, request_id: undefined } } : json;
}

/** Polls `check` until it returns true (for asynchronous cleanup we cannot await directly). */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** All ids of a list endpoint, following next_cursor. */
export async function walk(
  base: string,
  key: string,
  query: string,
  field: 'artifacts' | 'sessions' = 'artifacts',
): Promise<{ items: Rec[]; pages: number }> {
  const items: Rec[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = query ? '&' : '';
    const q = cursor ? `${query}${sep}cursor=${encodeURIComponent(cursor)}` : query;
    const path = field === 'artifacts' ? '/v1/artifacts' : '/v1/sessions';
    const r = await api(base, key, 'GET', `${path}?${q}`);
    expect(r.status, r.text).toBe(200);
    items.push(...r.json[field]);
    expect(r.json.has_more).toBe(r.json.next_cursor !== null);
    cursor = r.json.next_cursor;
    pages++;
    if (pages > 1000) throw new Error('cursor walk does not end');
  } while (cursor);
  return { items, pages };
}

/**
 * Gives a tenant `size` bytes of storage with one real artifact row over a pinned blob record
 * (uploading a gigabyte would be far too slow for a test); `name` makes its hash its own.
 */
export async function storeFiller(
  srv: TestServer,
  tenantId: string,
  size: number,
  name: string,
  now: number,
): Promise<void> {
  const hash = sha256(`filler ${name}`);
  const { artifactStore: store } = srv.core.deps;
  expect(await store.pinBlob(tenantId, hash, size, now, { owner: 'filler', until: now + 60_000 })).toBe('write');
  await store.insertArtifact({
    artifact: {
      id: newArtifactId(),
      tenantId,
      filename: 'filler.bin',
      contentType: 'application/octet-stream',
      sizeBytes: size,
      contentHash: hash,
      metadata: {},
      sessionId: null,
      agentId: null,
      createdAt: now,
      expiresAt: now + 30 * DAY_MS,
      deletedAt: null,
      status: 'active',
    },
    storageLimitBytes: PLANS.free.storageBytes,
  });
}
