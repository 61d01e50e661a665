import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import {
  blobFiles,
  expectError,
  put,
  sha256,
  stagingFiles,
  uploadJson,
  uploadMultipart,
  walk,
} from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 6, 1, 9, 0, 0));
const t0 = clock.now();
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

describe('GET /v1/sessions', () => {
  it('lists sessions by last_artifact_at DESC, session_id DESC, with counts and seal state', async () => {
    const key = await s.createTenant('sessions', 'pro');
    // alpha: t0 and t0+3m; beta: t0+1m; gamma and delta: both t0+2m (tie on last_artifact_at).
    await put(s.apiUrl, key, 'a1', { session_id: 'alpha' });
    clock.set(t0 + 60_000);
    await put(s.apiUrl, key, 'b1', { session_id: 'beta' });
    await put(s.apiUrl, key, 'b2', { session_id: 'beta' });
    clock.set(t0 + 120_000);
    await put(s.apiUrl, key, 'g1', { session_id: 'gamma' });
    await put(s.apiUrl, key, 'd1', { session_id: 'delta' });
    clock.set(t0 + 180_000);
    await put(s.apiUrl, key, 'a2', { session_id: 'alpha' });
    await put(s.apiUrl, key, 'no session');

    const r = await api(s.apiUrl, key, 'GET', '/v1/sessions');
    expect(r.status).toBe(200);
    expect(r.json.next_cursor).toBeNull();
    expect(r.json.has_more).toBe(false);
    expect(r.json.sessions).toEqual([
      {
        session_id: 'alpha',
        artifact_count: 2,
        is_sealed: false,
        sealed_at: null,
        first_artifact_at: iso(t0),
        last_artifact_at: iso(t0 + 180_000),
      },
      {
        session_id: 'gamma',
        artifact_count: 1,
        is_sealed: false,
        sealed_at: null,
        first_artifact_at: iso(t0 + 120_000),
        last_artifact_at: iso(t0 + 120_000),
      },
      {
        session_id: 'delta',
        artifact_count: 1,
        is_sealed: false,
        sealed_at: null,
        first_artifact_at: iso(t0 + 120_000),
        last_artifact_at: iso(t0 + 120_000),
      },
      {
        session_id: 'beta',
        artifact_count: 2,
        is_sealed: false,
        sealed_at: null,
        first_artifact_at: iso(t0 + 60_000),
        last_artifact_at: iso(t0 + 60_000),
      },
    ]);

    // Pagination: every page size walks the same order without gaps or duplicates.
    const all = r.json.sessions.map((x: { session_id: string }) => x.session_id);
    for (const limit of [1, 2, 3]) {
      const { items, pages } = await walk(s.apiUrl, key, `limit=${limit}`, 'sessions');
      expect(items.map((x) => x.session_id)).toEqual(all);
      expect(pages).toBe(Math.ceil(all.length / limit));
    }
    // `after` is an alias of `cursor`.
    const p1 = await api(s.apiUrl, key, 'GET', '/v1/sessions?limit=2');
    const p2 = await api(s.apiUrl, key, 'GET', `/v1/sessions?limit=2&after=${encodeURIComponent(p1.json.next_cursor)}`);
    expect(p2.json.sessions.map((x: { session_id: string }) => x.session_id)).toEqual(all.slice(2, 4));

    // created_after / created_before filter on first_artifact_at (exclusive).
    const after = await api(s.apiUrl, key, 'GET', `/v1/sessions?created_after=${encodeURIComponent(iso(t0 + 60_000))}`);
    expect(after.json.sessions.map((x: { session_id: string }) => x.session_id)).toEqual(['gamma', 'delta']);
    const before = await api(
      s.apiUrl,
      key,
      'GET',
      `/v1/sessions?created_before=${encodeURIComponent(iso(t0 + 60_000))}`,
    );
    expect(before.json.sessions.map((x: { session_id: string }) => x.session_id)).toEqual(['alpha']);

    for (const q of [
      'limit=0',
      'limit=201',
      'limit=x',
      'cursor=!!',
      'after=abc',
      'session_id=alpha',
      'created_after=nope',
    ]) {
      expectError(await api(s.apiUrl, key, 'GET', `/v1/sessions?${q}`), 400, 'invalid_request');
    }
  });
});

describe('POST /v1/sessions/{id}/seal', () => {
  it('seals once; sealing again returns the same sealed_at; the list shows it', async () => {
    const key = await s.createTenant('sealer', 'pro');
    await put(s.apiUrl, key, 's1', { session_id: 'run-1' });
    await put(s.apiUrl, key, 's2', { session_id: 'run-1' });
    clock.advance(5000);
    const sealedAt = iso(clock.now());
    const r = await api(s.apiUrl, key, 'POST', '/v1/sessions/run-1/seal');
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ session_id: 'run-1', status: 'sealed', sealed_at: sealedAt, artifact_count: 2 });
    clock.advance(60_000);
    const again = await api(s.apiUrl, key, 'POST', '/v1/sessions/run-1/seal');
    expect(again.status).toBe(200);
    expect(again.json).toEqual(r.json);
    const list = await api(s.apiUrl, key, 'GET', '/v1/sessions');
    expect(list.json.sessions[0]).toMatchObject({
      session_id: 'run-1',
      is_sealed: true,
      sealed_at: sealedAt,
      artifact_count: 2,
    });
    // Artifacts of a sealed session stay readable.
    expect((await api(s.apiUrl, key, 'GET', '/v1/artifacts?session_id=run-1')).json.artifacts).toHaveLength(2);
  });

  it('uploads naming a sealed session are 409 session_sealed and store nothing', async () => {
    const key = await s.createTenant('sealed-up', 'pro');
    await put(s.apiUrl, key, 'before seal', { session_id: 'closed' });
    expect((await api(s.apiUrl, key, 'POST', '/v1/sessions/closed/seal')).status).toBe(200);
    const whoBefore = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json;
    const blobsBefore = await blobFiles(s);

    const attempts = [
      () => uploadMultipart(s.apiUrl, key, { content: 'field-first', before: { session_id: 'closed' } }),
      () => uploadMultipart(s.apiUrl, key, { content: 'field-last', after: { session_id: 'closed' } }),
      () =>
        uploadJson(s.apiUrl, key, {
          filename: 'j.txt',
          content: Buffer.from('json-body').toString('base64'),
          session_id: 'closed',
        }),
      () =>
        uploadJson(
          s.apiUrl,
          key,
          { filename: 'j.txt', content: Buffer.from('idem').toString('base64'), session_id: 'closed' },
          { 'idempotency-key': 'sealed-1' },
        ),
    ];
    for (const attempt of attempts) expectError(await attempt(), 409, 'session_sealed');

    const list = await api(s.apiUrl, key, 'GET', '/v1/artifacts');
    expect(list.json.artifacts.map((a: { filename: string }) => a.filename)).toEqual(['note.txt']);
    const who = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json;
    expect(who.usage_storage_bytes).toBe(whoBefore.usage_storage_bytes);
    expect((await api(s.apiUrl, key, 'GET', '/v1/sessions')).json.sessions[0]).toMatchObject({ artifact_count: 1 });
    expect(await stagingFiles(s)).toEqual([]);
    // Not a single byte of the refused uploads reached blob storage.
    const blobsAfter = await blobFiles(s);
    for (const text of ['field-first', 'field-last', 'json-body', 'idem']) {
      expect(
        blobsAfter.filter((f) => f.endsWith(sha256(text))),
        text,
      ).toEqual([]);
    }
    expect(blobsAfter).toEqual(blobsBefore);
    // A refused upload does not burn its idempotency key... but the session stays sealed.
    expectError(
      await uploadJson(
        s.apiUrl,
        key,
        { filename: 'j.txt', content: Buffer.from('idem').toString('base64'), session_id: 'closed' },
        { 'idempotency-key': 'sealed-1' },
      ),
      409,
      'session_sealed',
    );
    // Other sessions still accept uploads.
    expect((await uploadJson(s.apiUrl, key, { filename: 'k.txt', content: 'eA==', session_id: 'open' })).status).toBe(
      201,
    );
  });

  it('an unknown or ill-formed session is 404 session_not_found', async () => {
    const key = await s.createTenant('seal-404', 'pro');
    expectError(await api(s.apiUrl, key, 'POST', '/v1/sessions/never-used/seal'), 404, 'session_not_found');
    expectError(await api(s.apiUrl, key, 'POST', '/v1/sessions/-bad-/seal'), 404, 'session_not_found');
    expectError(await api(s.apiUrl, key, 'POST', `/v1/sessions/${'x'.repeat(200)}/seal`), 404, 'session_not_found');
    // The longest valid session id (128 characters) can be sealed.
    const long = `L${'x'.repeat(127)}`;
    expect((await uploadJson(s.apiUrl, key, { filename: 'l.txt', content: 'eA==', session_id: long })).status).toBe(
      201,
    );
    expect((await api(s.apiUrl, key, 'POST', `/v1/sessions/${long}/seal`)).json).toMatchObject({
      session_id: long,
      status: 'sealed',
    });
    // Sealing an unknown session does not create it: an upload naming it still works.
    const r = await uploadJson(s.apiUrl, key, { filename: 'n.txt', content: 'eA==', session_id: 'never-used' });
    expect(r.status).toBe(201);
  });

  it('artifact_count drops when an artifact is deleted', async () => {
    const key = await s.createTenant('count', 'pro');
    const a = await put(s.apiUrl, key, 'c1', { session_id: 'counted' });
    await put(s.apiUrl, key, 'c2', { session_id: 'counted' });
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`);
    const list = await api(s.apiUrl, key, 'GET', '/v1/sessions');
    expect(list.json.sessions[0]).toMatchObject({ session_id: 'counted', artifact_count: 1 });
    const seal = await api(s.apiUrl, key, 'POST', '/v1/sessions/counted/seal');
    expect(seal.json.artifact_count).toBe(1);
  });
});
