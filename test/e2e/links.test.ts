import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError, fetchBytes, ISO_MS, put, type Rec, withoutRequestId } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Listing an artifact's share links (GET /v1/artifacts/{id}/links) and revoking one
 * (DELETE /v1/links/{link_id}): newest first, paginated, and a revoked URL is dead from the next
 * request on.
 */
let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 6, 1, 0, 0, 0));

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

const create = async (key: string, id: string, expires_in?: number) => {
  const r = await api(s.apiUrl, key, 'POST', `/v1/artifacts/${id}/links`, expires_in ? { expires_in } : undefined);
  expect(r.status, r.text).toBe(201);
  return r.json as { link_id: string; url: string; created_at: string; expires_at: string };
};
const list = (key: string, id: string, query = '') => api(s.apiUrl, key, 'GET', `/v1/artifacts/${id}/links${query}`);
const revoke = (key: string, linkId: string) => api(s.apiUrl, key, 'DELETE', `/v1/links/${linkId}`);
/** An error envelope with the id it names (and its request id) left out, to compare two. */
const withoutId = (json: Rec, id: string): Rec =>
  JSON.parse(JSON.stringify(withoutRequestId(json)).replaceAll(id, 'ID'));

describe('GET /v1/artifacts/{id}/links', () => {
  it('lists live links newest first, page by page; expired ones are left out', async () => {
    const key = await s.createTenant('links-list', 'free');
    const a = await put(s.apiUrl, key, 'listed', { filename: 'listed.txt' });
    const other = await put(s.apiUrl, key, 'other', { filename: 'other.txt' });
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await create(key, a.artifact_id, i === 0 ? 60 : undefined));
      clock.advance(1000);
    }
    await create(key, other.artifact_id);
    clock.advance(60_000); // the first link (60 s) has expired
    const all = await list(key, a.artifact_id);
    expect(all.status, all.text).toBe(200);
    expect(all.json).toEqual({
      links: made
        .slice(1)
        .reverse()
        .map(({ link_id, url, expires_at, created_at }) => ({ link_id, url, expires_at, created_at })),
      next_cursor: null,
      has_more: false,
    });
    for (const l of all.json.links) expect(l.created_at).toMatch(ISO_MS);

    const first = await list(key, a.artifact_id, '?limit=3');
    expect(first.json.links.map((l: { link_id: string }) => l.link_id)).toEqual(
      all.json.links.slice(0, 3).map((l: { link_id: string }) => l.link_id),
    );
    expect(first.json.has_more).toBe(true);
    const second = await list(key, a.artifact_id, `?limit=3&cursor=${first.json.next_cursor}`);
    expect(second.json.links).toEqual(all.json.links.slice(3));
    expect(second.json).toMatchObject({ next_cursor: null, has_more: false });

    expectError(await list(key, a.artifact_id, '?cursor=nope'), 400, 'invalid_request');
    expectError(await list(key, a.artifact_id, '?limit=0'), 400, 'invalid_request');
    expectError(await list(key, a.artifact_id, '?session_id=x'), 400, 'invalid_request');
    expectError(await list(key, 'art_0000000000000000'), 404, 'artifact_not_found');
    // Another tenant cannot see that the artifact exists, let alone its links.
    const stranger = await s.createTenant('links-stranger', 'free');
    expectError(await list(stranger, a.artifact_id), 404, 'artifact_not_found');
    expectError(await api(s.apiUrl, null, 'GET', `/v1/artifacts/${a.artifact_id}/links`), 401, 'unauthorized');
  });
});

describe('DELETE /v1/links/{link_id}', () => {
  it('the URL answers 404 from the next request, the list drops it, the cap frees a place; idempotent', async () => {
    const key = await s.createTenant('links-revoke', 'free');
    const a = await put(s.apiUrl, key, 'revocable bytes', { filename: 'r.txt' });
    const kept = await create(key, a.artifact_id);
    const gone = await create(key, a.artifact_id);
    expect((await fetchBytes(gone.url)).status).toBe(200);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(2);

    const r = await revoke(key, gone.link_id);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ link_id: gone.link_id, revoked: true });
    expect((await fetchBytes(gone.url)).status).toBe(404);
    expect((await fetchBytes(kept.url)).status).toBe(200);
    expect((await list(key, a.artifact_id)).json.links.map((l: { link_id: string }) => l.link_id)).toEqual([
      kept.link_id,
    ]);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(1);

    // Again: the same answer, for its owner. An unknown (well-formed) id is not found.
    expect((await revoke(key, gone.link_id)).json).toEqual({ link_id: gone.link_id, revoked: true });
    expectError(await revoke(key, `lnk_${'0'.repeat(20)}`), 404, 'artifact_not_found');
    expectError(await revoke(key, 'lnk_short'), 400, 'invalid_request');

    // Another tenant's revoke is not found, as for an unknown id, whether the link is live or
    // revoked, and changes nothing.
    const stranger = await s.createTenant('links-revoke-stranger', 'free');
    const foreign = await revoke(stranger, kept.link_id);
    expectError(foreign, 404, 'artifact_not_found');
    expect(withoutId(foreign.json, kept.link_id)).toEqual(
      withoutId((await revoke(stranger, `lnk_${'0'.repeat(20)}`)).json, `lnk_${'0'.repeat(20)}`),
    );
    expectError(await revoke(stranger, gone.link_id), 404, 'artifact_not_found');
    expect((await fetchBytes(kept.url)).status).toBe(200);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(1);
  });

  it('both routes are in the OpenAPI document with an operationId and their schemas', async () => {
    const doc = (await api(s.apiUrl, null, 'GET', '/v1/openapi.json')).json;
    const listOp = doc.paths['/v1/artifacts/{id}/links'].get;
    expect(listOp.operationId).toBe('listLinks');
    expect(Object.keys(listOp.responses)).toContain('200');
    const revokeOp = doc.paths['/v1/links/{link_id}'].delete;
    expect(revokeOp.operationId).toBe('revokeLink');
    expect(revokeOp.security).toEqual([{ bearer: [] }]);
  });
});

describe('POST /v1/artifacts/{id}/links: the lifetime as seconds or as a duration', () => {
  it('takes ttl "3d" or "12h" beside expires_in, refuses both at once, and shows a correct example', async () => {
    const key = await s.createTenant('links-ttl', 'free');
    const a = await put(s.apiUrl, key, 'three days');
    const post = (body: unknown) => api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, body);
    const lifetime = (link: { created_at: string; expires_at: string }) =>
      Date.parse(link.expires_at) - Date.parse(link.created_at);
    const days = await post({ ttl: '3d' });
    expect(days.status, days.text).toBe(201);
    expect(lifetime(days.json)).toBe(3 * 86_400_000);
    expect(lifetime((await post({ ttl: ' 12h ' })).json)).toBe(12 * 3_600_000);
    expect(lifetime((await post({ ttl: '30d' })).json)).toBe(30 * 86_400_000);
    expect(lifetime((await post({ expires_in: 259_200 })).json)).toBe(3 * 86_400_000);

    const both = await post({ ttl: '3d', expires_in: 60 });
    expectError(both, 400, 'invalid_request');
    expect(both.json.error.message).toMatch(/not both/);
    for (const ttl of ['3 days', '3', 'never', '0d', 3]) {
      const bad = await post({ ttl });
      expectError(bad, 400, 'invalid_request');
      expect(bad.json.error.message).toContain('"3d"');
    }
    const long = await post({ ttl: '31d' });
    expectError(long, 400, 'invalid_request');
    expect(long.json.error.message).toMatch(/30 days/);
    const seconds = await post({ expires_in: '3d' });
    expectError(seconds, 400, 'invalid_request');
    expect(seconds.json.error.message).toBe('body.expires_in must be integer, e.g. 259200');
  });
});
