import { type CairnClient, CairnError } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { caught, clientFor, ISO_MS } from './fixtures.js';

/** The SDK's session calls and page calls (publish, unpublish and the three public endpoints). */

let s: TestServer;
let client: CairnClient;

beforeAll(async () => {
  s = await startTestServer();
  client = clientFor(s);
});
afterAll(async () => s?.close());

describe('sessions', () => {
  it('listSessions, iterateSessions and sealSession', async () => {
    for (const [sid, n] of [
      ['sess-a', 2],
      ['sess-b', 1],
      ['sess-c', 3],
    ] as const) {
      for (let i = 0; i < n; i++) await client.uploadBytes(`${sid}-${i}`, { filename: `${i}.txt`, sessionId: sid });
    }
    const all = await client.listSessions();
    expect(all.sessions.map((x) => x.session_id)).toEqual(['sess-c', 'sess-b', 'sess-a']);
    expect(all.sessions[0]).toMatchObject({ artifact_count: 3, is_sealed: false, sealed_at: null });
    expect(all.sessions[0]!.first_artifact_at).toMatch(ISO_MS);

    const page = await client.listSessions({ limit: 2 });
    expect(page).toMatchObject({ has_more: true });
    const rest = await client.listSessions({ limit: 2, cursor: page.next_cursor! });
    expect(rest.sessions.map((x) => x.session_id)).toEqual(['sess-a']);

    const walked: string[] = [];
    for await (const x of client.iterateSessions({ limit: 1 })) walked.push(x.session_id);
    expect(walked).toEqual(['sess-c', 'sess-b', 'sess-a']);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await client.listSessions({ createdAfter: future })).sessions).toEqual([]);
    expect((await client.listSessions({ createdBefore: future })).sessions).toHaveLength(3);

    const sealed = await client.sealSession('sess-b');
    expect(sealed).toMatchObject({ session_id: 'sess-b', status: 'sealed', artifact_count: 1 });
    expect(sealed.sealed_at).toMatch(ISO_MS);
    expect((await client.sealSession('sess-b')).sealed_at).toBe(sealed.sealed_at);
    const after = await client.listSessions();
    expect(after.sessions.find((x) => x.session_id === 'sess-b')).toMatchObject({ is_sealed: true });
  });

  it('sealing an unknown session is session_not_found', async () => {
    const err = await caught(() => client.sealSession('never-used'));
    expect(err).toBeInstanceOf(CairnError);
    expect(err).toMatchObject({ code: 'session_not_found', status: 404 });
  });
});

describe('pages', () => {
  it('publish defaults to unlisted; the page shows on getArtifact; unpublish by id or slug', async () => {
    const art = await client.uploadBytes('# Hi', { filename: 'hi.md' });
    const page = await client.publish(art.artifact_id, { title: 'Hi' });
    expect(page).toMatchObject({ visibility: 'unlisted', access: 'none' });
    expect(page.page_id).toMatch(/^pg_[A-Za-z0-9]{16}$/);
    expect(page.public_url).toBe(`${s.viewerUrl}/a/${page.page_id}`);
    expect((await client.getArtifact(art.artifact_id)).page).toEqual({
      public_url: page.public_url,
      visibility: 'unlisted',
    });
    const pub = await client.publish(art.artifact_id, { visibility: 'public' });
    expect(pub).toMatchObject({ page_id: page.page_id, visibility: 'public' });

    expect(await client.unpublish(page.page_id)).toEqual({ page_id: page.page_id, unpublished: true });
    expect((await client.getArtifact(art.artifact_id)).page).toBeNull();
    await client.publish(art.artifact_id);
    expect(await client.unpublish(art.artifact_id)).toEqual({ page_id: page.page_id, unpublished: true });
  });

  it('password pages: gateInfo, unlock (right and wrong password) and report need no key', async () => {
    const art = await client.uploadBytes('secret notes', { filename: 'secret.md' });
    const page = await client.publish(art.artifact_id, { access: 'password', password: 's3cret!' });
    expect(page.access).toBe('password');

    const anon = clientFor(s, { apiKey: 'ak_live_not-a-real-key' });
    expect(await anon.gateInfo(page.page_id)).toEqual({ exists: true, access: 'password' });
    const token = await anon.unlock(page.page_id, 's3cret!');
    expect(token.expires_in).toBe(300);
    expect(typeof token.content_token).toBe('string');
    const res = await fetch(`${s.contentUrl}/c/${page.page_id}?token=${encodeURIComponent(token.content_token)}`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('secret notes');

    expect(await caught(() => anon.unlock(page.page_id, 'wrong'))).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(await anon.report(page.page_id, { reason: 'spam', detail: 'from the SDK test' })).toEqual({
      received: true,
    });
    expect(await anon.report(page.page_id)).toEqual({ received: true });
  });

  it('a password alone makes a gate, and publishing again replaces the settings', async () => {
    const art = await client.uploadBytes('gated', { filename: 'gated.md' });
    const page = await client.publish(art.artifact_id, { password: 'only-this' });
    expect(page).toMatchObject({ access: 'password', visibility: 'unlisted' });
    expect(await client.gateInfo(page.page_id)).toEqual({ exists: true, access: 'password' });
    // Again with the password: still gated, same URL, new title.
    const again = await client.publish(art.artifact_id, { title: 'Renamed', password: 'only-this' });
    expect(again).toMatchObject({ page_id: page.page_id, access: 'password' });
    // Again without it: the page is replaced by an open one (documented; the CLI guards this).
    expect(await client.publish(art.artifact_id, { title: 'Open now' })).toMatchObject({ access: 'none' });
    expect(await caught(() => client.gateInfo(page.page_id))).toMatchObject({ status: 404 });
  });

  it('gateInfo of an open page or an unknown slug is the same 404', async () => {
    const art = await client.uploadBytes('open', { filename: 'open.md' });
    const open = await client.publish(art.artifact_id);
    for (const slug of [open.page_id, 'pg_AAAAAAAAAAAAAAAA']) {
      expect(await caught(() => client.gateInfo(slug))).toMatchObject({ status: 404, code: 'artifact_not_found' });
    }
  });

  it('password access on a free plan is refused with upgradeUrl', async () => {
    const free = clientFor(s, { apiKey: await s.createTenant('free-pages', 'free') });
    const art = await free.uploadBytes('x', { filename: 'x.md' });
    const err = (await caught(() =>
      free.publish(art.artifact_id, { access: 'password', password: 'pw' }),
    )) as CairnError;
    expect(err).toBeInstanceOf(CairnError);
    expect(err.status).toBe(403);
    expect(typeof err.upgradeUrl).toBe('string');
  });
});
