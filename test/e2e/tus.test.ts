import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Balancer } from '../helpers/balancer.js';
import { fetchBytes } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { tusFetch, tusJsUpload, tusMetadata } from '../helpers/tus.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const idOf = (uploadUrl: string) => uploadUrl.split('/').pop() ?? '';

describe('tus 1.0.0 resumable uploads', () => {
  let s: TestServer;
  let endpoint: string;

  beforeAll(async () => {
    s = await startTestServer();
    endpoint = `${s.apiUrl}/v1/uploads/tus`;
  });
  afterAll(async () => s.close());

  const download = async (id: string) => {
    const link = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}/download-url`);
    expect(link.status).toBe(200);
    const got = await fetchBytes(link.json.download_url as string);
    expect(got.status).toBe(200);
    return got.body;
  };

  it('OPTIONS names the version, extensions, the largest size and the checksum algorithms', async () => {
    const res = await fetch(endpoint, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-resumable')).toBe('1.0.0');
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')?.split(',')).toEqual(
      expect.arrayContaining(['creation', 'creation-with-upload', 'termination', 'expiration', 'checksum']),
    );
    expect(res.headers.get('tus-max-size')).toBe(String(5 * 1024 ** 3));
    expect(res.headers.get('tus-checksum-algorithm')?.split(',')).toEqual(['sha1', 'sha256']);
  });

  it('tus-js-client uploads a file that becomes one artifact, byte for byte, with its fields', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const run = await tusJsUpload(data, {
      endpoint,
      apiKey: s.apiKey,
      metadata: {
        filename: 'big.bin',
        content_type: 'application/octet-stream',
        session_id: 'tus-1',
        agent_id: 'uploader',
        ttl: '7d',
        metadata: JSON.stringify({ kind: 'dump', n: 3 }),
      },
    });
    expect(run.url).toMatch(new RegExp(`^${s.apiUrl}/v1/uploads/tus/art_[A-Za-z0-9]{16}$`));
    const id = idOf(run.url);
    const rec = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${id}`);
    expect(rec.status).toBe(200);
    expect(rec.json).toMatchObject({
      artifact_id: id,
      filename: 'big.bin',
      size_bytes: data.length,
      content_hash: sha(data),
      session_id: 'tus-1',
      agent_id: 'uploader',
      metadata: { kind: 'dump', n: 3 },
    });
    expect(sha(await download(id))).toBe(sha(data));
    // The pieces went with the upload.
    expect((await s.landedFiles()).filter((f) => f.includes(id))).toEqual([]);
  });
});
