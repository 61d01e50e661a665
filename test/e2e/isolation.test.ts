import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { blobFilesFor, expectError, fetchBytes, HOUR_MS, put, type Rec, uploadJson } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Tenant isolation matrix: tenant B's key against every one of tenant A's ids on every route.
 * Another tenant's object is always `artifact_not_found` (sessions: `session_not_found`), and
 * nothing B does changes anything of A's.
 */
let s: TestServer;
let keyA: string;
let keyB: string;
let artA: Rec;
let transcriptA: Rec;
let deletedA: Rec;
/** Past its TTL and marked expired by the sweeper. */
let sweptA: Rec;
/** Past its TTL, not yet swept. */
let expiredA: Rec;
let linkA: Rec;
let downloadA: string;
let hasPublish = false;

const clock = new ManualClock(Date.UTC(2026, 4, 1, 0, 0, 0));

beforeAll(async () => {
  s = await startTestServer({ clock });
  keyA = await s.createTenant('tenant-a', 'pro');
  keyB = await s.createTenant('tenant-b', 'pro');
  artA = await put(s.apiUrl, keyA, 'secret of A', {
    filename: 'a-secret.md',
    session_id: 'sess-a',
    agent_id: 'agent-a',
    metadata: { project: 'alpha', n: 7 },
  });
  transcriptA = await put(s.apiUrl, keyA, '{"t":1}\n', {
    filename: 'a.ndjson',
    session_id: 'sess-a2',
    transcript: true,
  });
  deletedA = await put(s.apiUrl, keyA, 'deleted of A');
  await api(s.apiUrl, keyA, 'DELETE', `/v1/artifacts/${deletedA.artifact_id}`);
  sweptA = await put(s.apiUrl, keyA, 'swept of A', { ttl: '1h', session_id: 'sess-a' });
  expiredA = await put(s.apiUrl, keyA, 'expired of A', { ttl: '2h', session_id: 'sess-a' });
  clock.advance(HOUR_MS + 1000);
  await s.core.sweeper.runOnce();
  clock.advance(HOUR_MS);
  linkA = (await api(s.apiUrl, keyA, 'POST', `/v1/artifacts/${artA.artifact_id}/links`, {})).json;
  downloadA = (await api(s.apiUrl, keyA, 'GET', `/v1/artifacts/${artA.artifact_id}/download-url`)).json.download_url;
  const doc = (await api(s.apiUrl, null, 'GET', '/v1/openapi.json')).json;
  hasPublish = Boolean(doc.paths?.['/v1/artifacts/{id}/publish']);
});
afterAll(async () => {
  await s?.close();
});

describe('tenant B against tenant A', () => {
  it('every artifact route answers 404 artifact_not_found for A’s ids (live, transcript, deleted, expired)', async () => {
    // A itself sees its expired ones as 410, swept or not.
    for (const a of [sweptA, expiredA]) {
      expectError(await api(s.apiUrl, keyA, 'GET', `/v1/artifacts/${a.artifact_id}`), 410, 'artifact_expired');
    }
    for (const a of [artA, transcriptA, deletedA, sweptA, expiredA]) {
      const id = a.artifact_id;
      const attempts = [
        api(s.apiUrl, keyB, 'GET', `/v1/artifacts/${id}`),
        api(s.apiUrl, keyB, 'DELETE', `/v1/artifacts/${id}`),
        api(s.apiUrl, keyB, 'GET', `/v1/artifacts/${id}/download-url`),
        api(s.apiUrl, keyB, 'POST', `/v1/artifacts/${id}/links`, {}),
        api(s.apiUrl, keyB, 'POST', `/v1/artifacts/${id}/links`, { expires_in: 60 }),
      ];
      if (hasPublish) {
        attempts.push(api(s.apiUrl, keyB, 'POST', `/v1/artifacts/${id}/publish`, { visibility: 'unlisted' }));
        attempts.push(api(s.apiUrl, keyB, 'DELETE', `/v1/artifacts/${id}/publish`));
      }
      for (const r of await Promise.all(attempts)) expectError(r, 404, 'artifact_not_found');
    }
  });

  it('revoking A’s link is 404 artifact_not_found, as for an unknown id, and leaves it serving', async () => {
    const foreign = await api(s.apiUrl, keyB, 'DELETE', `/v1/links/${linkA.link_id}`);
    expectError(foreign, 404, 'artifact_not_found');
    const unknownId = `lnk_${'0'.repeat(20)}`;
    const unknown = await api(s.apiUrl, keyB, 'DELETE', `/v1/links/${unknownId}`);
    expect(foreign.json.error.message.replace(linkA.link_id, 'ID')).toBe(
      unknown.json.error.message.replace(unknownId, 'ID'),
    );
    expect((await fetchBytes(linkA.url)).status).toBe(200);
  });

  it('sealing A’s session is 404 session_not_found and leaves it open', async () => {
    for (const session of ['sess-a', 'sess-a2']) {
      expectError(await api(s.apiUrl, keyB, 'POST', `/v1/sessions/${session}/seal`), 404, 'session_not_found');
    }
    const sessions = (await api(s.apiUrl, keyA, 'GET', '/v1/sessions')).json.sessions;
    expect(sessions.map((x: { is_sealed: boolean }) => x.is_sealed)).toEqual([false, false]);
    // A can still upload into it.
    expect(
      (await uploadJson(s.apiUrl, keyA, { filename: 'more.txt', content: 'eA==', session_id: 'sess-a' })).status,
    ).toBe(201);
  });

  it('B’s lists never show A’s data, whatever the filter', async () => {
    const queries = [
      '',
      'limit=200',
      'session_id=sess-a',
      'session_id=sess-a2',
      'agent_id=agent-a',
      'filename=a-secret.md',
      'content_type=text%2Fmarkdown',
      'content_type=application%2Fx-ndjson',
      'created_after=2000-01-01T00:00:00Z',
      'created_before=2999-01-01T00:00:00Z',
      'transcript=true',
      'metadata.project=alpha',
      'metadata.n=7',
      'metadata.type=transcript',
    ];
    for (const q of queries) {
      const r = await api(s.apiUrl, keyB, 'GET', `/v1/artifacts?${q}`);
      expect(r.status, q).toBe(200);
      expect(r.json.artifacts, q).toEqual([]);
      expect(r.json.next_cursor).toBeNull();
    }
    // A's cursor, replayed by B, still only walks B's (empty) data.
    const pageA = await api(s.apiUrl, keyA, 'GET', '/v1/artifacts?limit=1');
    expect(pageA.json.next_cursor).toEqual(expect.any(String));
    const replay = await api(
      s.apiUrl,
      keyB,
      'GET',
      `/v1/artifacts?limit=1&cursor=${encodeURIComponent(pageA.json.next_cursor)}`,
    );
    expect(replay.json.artifacts).toEqual([]);
    const sessions = await api(s.apiUrl, keyB, 'GET', '/v1/sessions');
    expect(sessions.json.sessions).toEqual([]);
    const sessionsA = await api(s.apiUrl, keyA, 'GET', '/v1/sessions?limit=1');
    const replaySessions = await api(
      s.apiUrl,
      keyB,
      'GET',
      `/v1/sessions?cursor=${encodeURIComponent(sessionsA.json.next_cursor)}`,
    );
    expect(replaySessions.json.sessions).toEqual([]);
    const who = (await api(s.apiUrl, keyB, 'GET', '/v1/whoami')).json;
    expect(who).toMatchObject({ tenant_name: 'tenant-b', usage_storage_bytes: 0, active_links: 0 });
  });

  it('the same bytes uploaded by B are B’s own blob and storage; A is unaffected', async () => {
    const whoA = (await api(s.apiUrl, keyA, 'GET', '/v1/whoami')).json;
    const b = await put(s.apiUrl, keyB, 'secret of A', { filename: 'b-copy.md', session_id: 'sess-a' });
    expect(b.content_hash).toBe(artA.content_hash);
    expect(await blobFilesFor(s, artA.content_hash)).toHaveLength(2);
    expect((await api(s.apiUrl, keyB, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(b.size_bytes);
    expect((await api(s.apiUrl, keyA, 'GET', '/v1/whoami')).json.usage_storage_bytes).toBe(whoA.usage_storage_bytes);
    // B's session of the same name is B's own: sealing it leaves A's open.
    expect((await api(s.apiUrl, keyB, 'POST', '/v1/sessions/sess-a/seal')).status).toBe(200);
    expect(
      (await uploadJson(s.apiUrl, keyA, { filename: 'still.txt', content: 'eA==', session_id: 'sess-a' })).status,
    ).toBe(201);
    // B deleting its copy does not touch A's bytes.
    expect((await api(s.apiUrl, keyB, 'DELETE', `/v1/artifacts/${b.artifact_id}`)).status).toBe(200);
    expect((await fetchBytes(linkA.url)).body.toString()).toBe('secret of A');
    // A lists its own data only.
    const listA = (await api(s.apiUrl, keyA, 'GET', '/v1/artifacts?limit=200')).json.artifacts;
    expect(listA.map((x: { artifact_id: string }) => x.artifact_id)).not.toContain(b.artifact_id);
  });

  it('A’s artifact, link and signed URL are untouched afterwards', async () => {
    const got = await api(s.apiUrl, keyA, 'GET', `/v1/artifacts/${artA.artifact_id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(artA);
    expect((await api(s.apiUrl, keyA, 'GET', `/v1/artifacts/${transcriptA.artifact_id}`)).json).toEqual(transcriptA);
    expect((await fetchBytes(linkA.url)).status).toBe(200);
    const dl = await fetchBytes(downloadA);
    expect(dl.status).toBe(200);
    expect(dl.body.toString()).toBe('secret of A');
    expectError(
      await api(s.apiUrl, keyA, 'GET', `/v1/artifacts/${deletedA.artifact_id}`),
      410,
      'artifact_already_deleted',
    );
    const whoA = (await api(s.apiUrl, keyA, 'GET', '/v1/whoami')).json;
    expect(whoA.active_links).toBe(1);
  });
});
