import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { DAY_MS, expectError, fetchBytes, ISO_MS, LINK_ID, put, sha256 } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 5, 1, 0, 0, 0));

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

const link = (key: string, id: string, body?: unknown) => api(s.apiUrl, key, 'POST', `/v1/artifacts/${id}/links`, body);

describe('POST /v1/artifacts/{id}/links', () => {
  it('creates a 7-day link by default, served unauthenticated at /lnk_<id> on the content origin', async () => {
    const content = 'share me, please';
    const a = await put(s.apiUrl, s.apiKey, content, { filename: 'shared.txt' });
    for (const body of [undefined, {}]) {
      const r = await link(s.apiKey, a.artifact_id, body);
      expect(r.status, r.text).toBe(201);
      expect(Object.keys(r.json).sort()).toEqual(['artifact_id', 'created_at', 'expires_at', 'link_id', 'url']);
      expect(r.json.link_id).toMatch(LINK_ID);
      expect(r.json.artifact_id).toBe(a.artifact_id);
      expect(r.json.url).toBe(`${s.contentUrl}/${r.json.link_id}`);
      expect(r.json.created_at).toMatch(ISO_MS);
      expect(r.json.created_at).toBe(new Date(clock.now()).toISOString());
      expect(Date.parse(r.json.expires_at) - Date.parse(r.json.created_at)).toBe(7 * DAY_MS);
      const got = await fetchBytes(r.json.url);
      expect(got.status).toBe(200);
      expect(got.body.toString()).toBe(content);
      expect(sha256(got.body)).toBe(a.content_hash);
      expect(got.headers.get('content-length')).toBe(String(content.length));
      expect(got.headers.get('etag')).toBe(`"${a.content_hash}"`);
      expect(got.headers.get('x-content-type-options')).toBe('nosniff');
      expect(got.headers.get('content-disposition')).toMatch(/^attachment;.*filename\*=UTF-8''shared\.txt/);
      expect((await fetchBytes(r.json.url, { range: 'bytes=0-4' })).body.toString()).toBe('share');
      const head = await fetch(r.json.url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(content.length));
    }
  });

  it('accepts 1 s to 30 d; 0, 2592001, strings, fractions and unknown fields are invalid_request', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'bounds');
    const max = await link(s.apiKey, a.artifact_id, { expires_in: 2_592_000 });
    expect(max.status, max.text).toBe(201);
    expect(Date.parse(max.json.expires_at) - Date.parse(max.json.created_at)).toBe(30 * DAY_MS);
    const one = await link(s.apiKey, a.artifact_id, { expires_in: 1 });
    expect(one.status).toBe(201);
    for (const body of [
      { expires_in: 0 },
      { expires_in: 2_592_001 },
      { expires_in: -5 },
      { expires_in: '60' },
      { expires_in: 1.5 },
      { expires_in: 60, extra: true },
      [60],
    ]) {
      expectError(await link(s.apiKey, a.artifact_id, body), 400, 'invalid_request');
    }
    expectError(
      await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${a.artifact_id}/links`, '{bad json'),
      400,
      'invalid_request',
    );
  });

  it('a link stops at its expiry, and active_links follows', async () => {
    const key = await s.createTenant('linker', 'free');
    const a = await put(s.apiUrl, key, 'expiring link', { ttl: '30d' });
    const short = (await link(key, a.artifact_id, { expires_in: 600 })).json;
    const long = (await link(key, a.artifact_id, { expires_in: 3600 })).json;
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(2);
    clock.advance(600 * 1000 - 1);
    expect((await fetchBytes(short.url)).status).toBe(200);
    clock.advance(1);
    const gone = await fetchBytes(short.url);
    expect(gone.status).toBe(404);
    expect(JSON.parse(gone.body.toString()).error.code).toBe('artifact_not_found');
    expect((await fetchBytes(long.url)).status).toBe(200);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(1);
  });

  it('deleting the artifact kills its links at once', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'doomed');
    const l = (await link(s.apiKey, a.artifact_id, {})).json;
    expect((await fetchBytes(l.url)).status).toBe(200);
    expect((await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${a.artifact_id}`)).status).toBe(200);
    expect((await fetchBytes(l.url)).status).toBe(404);
  });

  it('an expired artifact kills its links even if the link is younger', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'short artifact', { ttl: '1h' });
    const l = (await link(s.apiKey, a.artifact_id, { expires_in: 86_400 })).json;
    clock.advance(3600 * 1000);
    expect((await fetchBytes(l.url)).status).toBe(404);
  });

  it('unknown or malformed link ids are 404', async () => {
    for (const p of ['/lnk_AAAAAAAAAAAAAAAAAAAA', '/lnk_short', '/nothing', '/lnk_AAAAAAAAAAAAAAAAAAAA/extra']) {
      const r = await fetchBytes(`${s.contentUrl}${p}`);
      expect(r.status, p).toBe(404);
    }
    // Links are not served by the API or viewer origins.
    const a = await put(s.apiUrl, s.apiKey, 'origin check');
    const l = (await link(s.apiKey, a.artifact_id, {})).json;
    expect((await fetchBytes(`${s.apiUrl}/${l.link_id}`)).status).toBe(404);
    expect((await fetchBytes(`${s.viewerUrl}/${l.link_id}`)).status).toBe(404);
  });
});
