import { randomBytes } from 'node:crypto';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchBytes, type Rec, sha256, uploadMultipart } from '../helpers/e2e.js';
import { type S3Proxy, startS3Proxy } from '../helpers/s3-proxy.js';
import { scaleoutUnavailable } from '../helpers/scaleout.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { emptyPrefix, startTestS3, type TestS3 } from '../helpers/test-s3.js';

/**
 * Any mix of the adapters works: SQLite + S3 and PostgreSQL + the local folder, each through a
 * short upload → list → download → delete. The S3 side (s3rver, or the engine
 * CAIRN_TEST_S3_ENDPOINT names) also checks, on the requests the S3 server really received, that
 * no checksum headers are sent (servers like R2 and MinIO reject or mishandle the SDK's newer
 * defaults), and that CAIRN_S3_DIRECT_DOWNLOADS hands out working S3 presigned GETs.
 */

/** Upload (multipart), list, download, delete, and gone afterwards; returns the record. */
async function smoke(s: TestServer, bytes: Buffer, filename: string): Promise<Rec> {
  const up = await uploadMultipart(s.apiUrl, s.apiKey, { content: bytes, filename, before: { session_id: 'mixed' } });
  expect(up.status, up.text).toBe(201);
  const id = up.json.artifact_id as string;
  const listed = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?session_id=mixed');
  expect(listed.json.artifacts.map((a: Rec) => a.artifact_id)).toContain(id);
  const url = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}/download-url`);
  expect(url.status, url.text).toBe(200);
  const got = await fetchBytes(url.json.download_url);
  expect(got.status).toBe(200);
  expect(sha256(got.body)).toBe(sha256(bytes));
  expect((await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${id}`)).status).toBe(200);
  expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}`)).status).toBe(410);
  const after = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?session_id=mixed');
  expect(after.json.artifacts.map((a: Rec) => a.artifact_id)).not.toContain(id);
  return up.json;
}

describe('SQLite + S3', () => {
  const BUCKET = 'cairn-mixed';
  // Prefixes of this run's own: an external engine's bucket is shared and outlives the run.
  const run = randomBytes(4).toString('hex');
  const VIA = `via-cairn-${run}/`;
  const DIRECT = `direct-${run}/`;
  let s3: TestS3;
  let proxy: S3Proxy;
  let client: S3Client;
  let s: TestServer;
  let direct: TestServer;

  beforeAll(async () => {
    s3 = await startTestS3({ buckets: [BUCKET] });
    // The S3 adapter takes credentials from the SDK's default chain, as in production.
    process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
    proxy = await startS3Proxy(s3.endpoint);
    client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: s3.credentials,
    });
    const env = {
      CAIRN_S3_BUCKET: BUCKET,
      CAIRN_S3_ENDPOINT: proxy.url,
      CAIRN_S3_REGION: s3.region,
      CAIRN_S3_FORCE_PATH_STYLE: 'true',
    };
    s = await startTestServer({ env: { ...env, CAIRN_S3_PREFIX: VIA } });
    direct = await startTestServer({ env: { ...env, CAIRN_S3_PREFIX: DIRECT, CAIRN_S3_DIRECT_DOWNLOADS: '1' } });
  });
  afterAll(async () => {
    await s?.close();
    await direct?.close();
    await proxy?.close();
    if (client) {
      for (const prefix of [VIA, DIRECT]) await emptyPrefix(client, BUCKET, prefix);
      client.destroy();
    }
    await s3?.close();
  });

  async function objectKeys(prefix: string): Promise<string[]> {
    const out = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    return (out.Contents ?? []).map((o) => o.Key ?? '').sort();
  }

  it('stores the bytes in the bucket and the records in SQLite: upload, list, download, delete', async () => {
    const small = await smoke(s, Buffer.from('small, one PutObject'), 'small.txt');
    // Over the 8 MiB part size: a multipart upload.
    const big = await smoke(s, randomBytes(9 * 1024 * 1024), 'big.bin');
    const tenant = (await s.core.tenants.byName('main')).id;
    expect(await objectKeys(VIA)).toEqual(
      [`${VIA}${tenant}/${small.content_hash}`, `${VIA}${tenant}/${big.content_hash}`].sort(),
    );
    expect(await s.databaseContains(big.artifact_id)).toBe(true);
  });

  it('sends no checksum headers (checksums "when required"), on PutObject and UploadPart alike', async () => {
    const writes = proxy.seen.filter((r) => r.method === 'PUT' || r.method === 'POST');
    const parts = writes.filter((r) => /[?&]partNumber=/.test(r.url));
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(
      writes.filter((r) => r.method === 'PUT' && !/[?&](partNumber|uploadId)=/.test(r.url)).length,
    ).toBeGreaterThan(0);
    for (const r of proxy.seen) {
      const names = Object.keys(r.headers);
      expect(
        names.filter((h) => h.startsWith('x-amz-checksum-') || h === 'x-amz-sdk-checksum-algorithm'),
        `${r.method} ${r.url}`,
      ).toEqual([]);
    }
    // Nor does a presigned PUT URL ask the client for one.
    const ticket = await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts/upload-url', {
      filename: 'p.bin',
      size_bytes: 4,
    });
    expect(ticket.status, ticket.text).toBe(201);
    expect(ticket.json.upload_url).not.toMatch(/x-amz-checksum|x-amz-sdk-checksum/i);
    expect(Object.keys(ticket.json.upload_headers)).toEqual(['Content-Length']);
  });

  it('with CAIRN_S3_DIRECT_DOWNLOADS the download URL is an S3 presigned GET that works', async () => {
    const bytes = Buffer.from('# straight from the bucket\n');
    const up = await uploadMultipart(direct.apiUrl, direct.apiKey, { content: bytes, filename: 'notes.md' });
    expect(up.status, up.text).toBe(201);
    const r = await api(direct.apiUrl, direct.apiKey, 'GET', `/v1/artifacts/${up.json.artifact_id}/download-url`);
    expect(r.status, r.text).toBe(200);
    const url = new URL(r.json.download_url);
    expect(url.origin).toBe(proxy.url);
    expect(url.pathname).toBe(`/${BUCKET}/${DIRECT}${(await direct.core.tenants.byName('main')).id}/${sha256(bytes)}`);
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(Number(url.searchParams.get('X-Amz-Expires'))).toBe(r.json.expires_in);
    const got = await fetchBytes(url.href);
    expect(got.status).toBe(200);
    expect(got.body.equals(bytes)).toBe(true);
    expect(got.headers.get('content-disposition')).toMatch(/^attachment; filename="notes\.md"/);
    expect(got.headers.get('content-type')).toMatch(/^text\/markdown/);
    if (s3.checksPresignedUrls) {
      const tampered = new URL(url);
      tampered.searchParams.set('X-Amz-Signature', '0'.repeat(64));
      expect((await fetchBytes(tampered.href)).status).toBe(403);
    }
  });
});

const reason = await scaleoutUnavailable();
if (reason && !process.env.CI) console.warn(`\n!!! SKIPPING PostgreSQL + local folder: ${reason}.\n`);

describe.skipIf(reason !== null && !process.env.CI)('PostgreSQL + local folder', () => {
  const dbUrl = process.env.CAIRN_TEST_DATABASE_URL ?? '';
  const schema = `cairn_mixed_${randomBytes(5).toString('hex')}`;
  let s: TestServer;

  beforeAll(async () => {
    if (reason) throw new Error(`CI must run the PostgreSQL + local folder test, but ${reason}.`);
    s = await startTestServer({ env: { CAIRN_DATABASE_URL: dbUrl, CAIRN_DATABASE_SCHEMA: schema } });
  });
  afterAll(async () => {
    await s?.close();
    if (reason) return;
    const admin = new pg.Client({ connectionString: dbUrl });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  it('stores the records in PostgreSQL and the bytes in the data folder: upload, list, download, delete', async () => {
    const rec = await smoke(s, randomBytes(70_000), 'data.bin');
    expect((await s.blobFiles()).some((f) => f.endsWith(rec.content_hash))).toBe(true);
    // No SQLite file: the records went to PostgreSQL.
    await expect(s.databaseContains(rec.artifact_id)).rejects.toThrow(/no cairn\.sqlite/);
    const db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    try {
      const { rows } = await db.query(`SELECT status FROM ${schema}.artifacts WHERE id = $1`, [rec.artifact_id]);
      expect(rows).toEqual([{ status: 'deleted' }]);
    } finally {
      await db.end();
    }
  });
});
