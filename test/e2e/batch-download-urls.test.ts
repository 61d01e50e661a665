import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError, HOUR_MS, put, type Rec } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/** `POST /v1/artifacts/batch/download-urls` (V1.1): up to 20 private download URLs in one call. */

let s: TestServer;
// Near real time: S3 presigned URLs are checked against the bucket's own clock.
const clock = new ManualClock(Date.now());

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

const batch = (body: unknown, key = s.apiKey) => api(s.apiUrl, key, 'POST', '/v1/artifacts/batch/download-urls', body);

describe('POST /v1/artifacts/batch/download-urls', () => {
  it('answers one item per id in request order: URLs, and errors for unknown, foreign, deleted and expired ids', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'alpha bytes', { filename: 'a.txt' });
    const b = await put(s.apiUrl, s.apiKey, '# beta', { filename: 'b.md' });
    const gone = await put(s.apiUrl, s.apiKey, 'deleted bytes');
    expect((await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${gone.artifact_id}`)).status).toBe(200);
    const expiring = await put(s.apiUrl, s.apiKey, 'short-lived', { ttl: '1h' });
    const otherKey = await s.createTenant('batch-other', 'pro');
    const foreign = await put(s.apiUrl, otherKey, 'not yours');
    clock.advance(HOUR_MS + 1000);
    const unknown = 'art_0000000000000000';
    const ids = [
      b.artifact_id,
      unknown,
      a.artifact_id,
      foreign.artifact_id,
      gone.artifact_id,
      expiring.artifact_id,
      b.artifact_id,
    ];

    const r = await batch({ artifact_ids: ids });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.json)).toEqual(['download_urls']);
    const items = r.json.download_urls as Rec[];
    expect(items.map((i) => i.artifact_id)).toEqual(ids);
    const url = (rec: Rec) => ({
      artifact_id: rec.artifact_id,
      download_url: expect.any(String),
      expires_in: 3600,
      filename: rec.filename,
      content_type: rec.content_type,
      size_bytes: rec.size_bytes,
    });
    const error = (id: string, code: string, status: number) => ({
      artifact_id: id,
      error: { code, message: expect.any(String), status },
    });
    expect(items).toEqual([
      url(b),
      error(unknown, 'artifact_not_found', 404),
      url(a),
      // Another tenant's id is exactly an unknown one.
      error(foreign.artifact_id, 'artifact_not_found', 404),
      error(gone.artifact_id, 'artifact_already_deleted', 410),
      error(expiring.artifact_id, 'artifact_expired', 410),
      url(b),
    ]);
    expect(items[3]?.error.message).toBe(items[1]?.error.message.replace(unknown, foreign.artifact_id));
    // The URLs work without a key.
    expect(await (await fetch(items[2]?.download_url)).text()).toBe('alpha bytes');
    expect(await (await fetch(items[0]?.download_url)).text()).toBe('# beta');
  });

  it('counts as one request against the monthly quota', async () => {
    const key = await s.createTenant('batch-count', 'pro');
    const mine = [await put(s.apiUrl, key, 'one'), await put(s.apiUrl, key, 'two')];
    await s.core.requests.flush();
    const before = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_requests_month;
    const r = await batch({ artifact_ids: [...mine, ...mine, ...mine].map((m) => m.artifact_id) }, key);
    expect(r.status, r.text).toBe(200);
    expect(r.json.download_urls).toHaveLength(6);
    await s.core.requests.flush();
    const after = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_requests_month;
    // The batch and the second whoami.
    expect(after - before).toBe(2);
  });

  it('takes 20 ids; none, 21, a malformed id, a wrong shape or an unknown field is invalid_request', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'twenty');
    const twenty = Array.from({ length: 20 }, () => a.artifact_id);
    const ok = await batch({ artifact_ids: twenty });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.download_urls).toHaveLength(20);
    for (const body of [
      { artifact_ids: [] },
      { artifact_ids: [...twenty, a.artifact_id] },
      { artifact_ids: [a.artifact_id, 'art_short'] },
      { artifact_ids: [a.artifact_id, 42] },
      { artifact_ids: a.artifact_id },
      {},
      { artifact_ids: [a.artifact_id], expires_in: 60 },
    ]) {
      const r = await batch(body);
      expectError(r, 400, 'invalid_request');
      expect(r.json.error.message, JSON.stringify(body)).toMatch(/artifact_ids|expires_in/);
    }
    expectError(
      await batch({ artifact_ids: [a.artifact_id] }, 'ak_live_00000000000000000000000000000000'),
      401,
      'unauthorized',
    );
  });
});

describe('the OpenAPI document', () => {
  it('describes the batch route with its request and both item shapes', async () => {
    const doc = (await api(s.apiUrl, null, 'GET', '/v1/openapi.json')).json;
    const op = doc.paths['/v1/artifacts/batch/download-urls'].post;
    expect(op.operationId).toBe('getDownloadUrls');
    // Named components, as every shape of the document.
    const named = (schema: Rec) => doc.components.schemas[String(schema.$ref).split('/').pop() as string];
    const body = named(op.requestBody.content['application/json'].schema);
    expect(body.required).toEqual(['artifact_ids']);
    expect(body.properties.artifact_ids).toMatchObject({ type: 'array', minItems: 1, maxItems: 20 });
    expect(body.additionalProperties).toBe(false);
    const items = named(op.responses['200'].content['application/json'].schema).properties.download_urls.items;
    expect(items.anyOf.map((o: Rec) => Object.keys(o.properties).sort())).toEqual([
      ['artifact_id', 'content_type', 'download_url', 'expires_in', 'filename', 'size_bytes'],
      ['artifact_id', 'error'],
    ]);
  });
});
