import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutStoring } from '../../src/bench/no-store.js';
import { blobFiles, sha256, stagingFiles, uploadMultipart } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The small-upload baseline must be the real route minus storing: it answers like Cairn (201,
 * the record with the bytes' hash, the same refusals) and leaves nothing behind.
 */
describe('bench baseline: the upload route without storing', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ wrapAdapters: withoutStoring });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('answers 201 with the record, but stores no blob, no row and no staging file', async () => {
    const bytes = Buffer.from('four kilobytes, more or less');
    const r = await uploadMultipart(s.apiUrl, s.apiKey, {
      filename: 'a.txt',
      content: bytes,
      before: { session_id: 's1' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({ filename: 'a.txt', size_bytes: bytes.length, content_hash: sha256(bytes) });
    expect(await blobFiles(s)).toEqual([]);
    expect(await stagingFiles(s)).toEqual([]);
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${r.json.artifact_id}`)).status).toBe(404);
    expect((await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts')).json.artifacts).toEqual([]);
  });

  it('still checks the request like the route does', async () => {
    expect((await uploadMultipart(s.apiUrl, 'cairn_sk_wrong', { filename: 'a.txt', content: 'x' })).status).toBe(401);
    const r = await uploadMultipart(s.apiUrl, s.apiKey, { filename: 'a.txt', content: 'x', before: { ttl: 'soon' } });
    expect(r.status).toBe(400);
  });
});
