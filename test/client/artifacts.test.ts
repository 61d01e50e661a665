import { type CairnClient, CairnError } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ART_ID, caught, clientFor, countingFetch, ISO_MS, sha256 } from './fixtures.js';

/** The SDK's read, list and delete calls against a real server. */

let s: TestServer;
let client: CairnClient;

beforeAll(async () => {
  s = await startTestServer();
  client = clientFor(s);
});
afterAll(async () => s?.close());

describe('health and whoami', () => {
  it('health needs no key', async () => {
    const anon = clientFor(s, { apiKey: 'ak_live_wrong' });
    expect(await anon.health()).toEqual({ status: 'ok' });
  });

  it('openapi returns the OpenAPI 3.1 document, with no key needed', async () => {
    const doc = await clientFor(s, { apiKey: 'ak_live_wrong' }).openapi();
    expect(String(doc.openapi)).toMatch(/^3\.1/);
    expect(Object.keys(doc.paths as object)).toEqual(expect.arrayContaining(['/v1/artifacts', '/v1/whoami']));
  });

  it("whoami returns the spec's eleven fields of the tenant and the four of what is left", async () => {
    const me = await client.whoami();
    expect(Object.keys(me).sort()).toEqual(
      [
        'usage_storage_bytes_remaining',
        'usage_requests_remaining_month',
        'requests_month_resets_at',
        'rate_limit_unit',
        'tenant_name',
        'plan',
        'api_key_last_4',
        'usage_storage_bytes',
        'plan_storage_limit_bytes',
        'usage_requests_month',
        'plan_requests_limit_month',
        'active_links',
        'max_active_links',
        'rate_limit_sustained',
        'rate_limit_burst',
      ].sort(),
    );
    expect(me).toMatchObject({ tenant_name: 'main', plan: 'pro', api_key_last_4: s.apiKey.slice(-4) });
  });

  it('accepts a base URL with a trailing slash and refuses a missing key', async () => {
    const slashed = clientFor(s, { baseUrl: `${s.apiUrl}/` });
    expect(slashed.baseUrl).toBe(s.apiUrl);
    expect((await slashed.whoami()).tenant_name).toBe('main');
    expect(() => clientFor(s, { apiKey: '' })).toThrow(TypeError);
  });
});

describe('getArtifact, listArtifacts, iterateArtifacts', () => {
  it('getArtifact returns the record the upload returned', async () => {
    const up = await client.uploadBytes('hello', { filename: 'hello.txt', metadata: { n: 1 } });
    const got = await client.getArtifact(up.artifact_id);
    expect(got).toEqual(up);
    expect(got.artifact_id).toMatch(ART_ID);
    expect(got.created_at).toMatch(ISO_MS);
    expect(got.content_hash).toBe(sha256('hello'));
  });

  it('listArtifacts maps the camelCase filters onto the wire query', async () => {
    const a = await client.uploadBytes('a', { filename: 'a.txt', sessionId: 'list-s1', agentId: 'bot-a' });
    const b = await client.uploadBytes('{"x":1}', {
      filename: 'b.jsonl',
      sessionId: 'list-s1',
      agentId: 'bot-b',
      metadata: { stage: 'final', score: 3 },
    });
    const t = await client.uploadBytes('{}\n', { filename: 't.jsonl', sessionId: 'list-s1', transcript: true });
    const ids = (l: { artifacts: { artifact_id: string }[] }) => l.artifacts.map((r) => r.artifact_id);

    expect(ids(await client.listArtifacts({ sessionId: 'list-s1' }))).toEqual([
      t.artifact_id,
      b.artifact_id,
      a.artifact_id,
    ]);
    expect(ids(await client.listArtifacts({ sessionId: 'list-s1', agentId: 'bot-a' }))).toEqual([a.artifact_id]);
    expect(ids(await client.listArtifacts({ filename: 'b.jsonl' }))).toEqual([b.artifact_id]);
    expect(ids(await client.listArtifacts({ metadata: { stage: 'final' } }))).toEqual([b.artifact_id]);
    expect(ids(await client.listArtifacts({ metadata: { score: '3' } }))).toEqual([b.artifact_id]);
    expect(ids(await client.listArtifacts({ sessionId: 'list-s1', transcript: true }))).toEqual([t.artifact_id]);
    expect(ids(await client.listArtifacts({ sessionId: 'list-s1', contentType: 'text/plain' }))).toEqual([
      a.artifact_id,
    ]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(ids(await client.listArtifacts({ sessionId: 'list-s1', createdAfter: future }))).toEqual([]);
    expect(ids(await client.listArtifacts({ sessionId: 'list-s1', createdBefore: future }))).toHaveLength(3);

    const page = await client.listArtifacts({ sessionId: 'list-s1', limit: 2 });
    expect(page.artifacts).toHaveLength(2);
    expect(page.has_more).toBe(true);
    expect(typeof page.next_cursor).toBe('string');
    const rest = await client.listArtifacts({ sessionId: 'list-s1', limit: 2, cursor: page.next_cursor! });
    expect(ids(rest)).toEqual([a.artifact_id]);
    expect(rest).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('several metadata pairs reach the server, all of which must match; a ninth is invalid_request', async () => {
    const both = await client.uploadBytes('both', { filename: 'pairs-both.txt', metadata: { pair: 'p1', kind: 'k1' } });
    await client.uploadBytes('one', { filename: 'pairs-one.txt', metadata: { pair: 'p1', kind: 'k2' } });
    const page = await client.listArtifacts({ metadata: { pair: 'p1', kind: 'k1' } });
    expect(page.artifacts.map((a) => a.artifact_id)).toEqual([both.artifact_id]);
    const nine = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v']));
    const err = await caught(() => client.listArtifacts({ metadata: nine }));
    expect(err).toBeInstanceOf(CairnError);
    expect(err).toMatchObject({ code: 'invalid_request', status: 400 });
  });

  it('downloadUrls answers one item per id in order, errors inline, in one request', async () => {
    const a = await client.uploadBytes('batch a', { filename: 'batch-a.txt' });
    const b = await client.uploadBytes('batch b', { filename: 'batch-b.txt' });
    const unknown = 'art_0000000000000000';
    const { download_urls: items } = await client.downloadUrls([b.artifact_id, unknown, a.artifact_id]);
    expect(items.map((i) => i.artifact_id)).toEqual([b.artifact_id, unknown, a.artifact_id]);
    expect(items[0]).toMatchObject({ filename: 'batch-b.txt', expires_in: 3600, size_bytes: 7 });
    expect(items[1]).toEqual({
      artifact_id: unknown,
      error: { code: 'artifact_not_found', message: expect.any(String), status: 404 },
    });
    const first = items[2];
    if (!first || !('download_url' in first)) throw new Error('no URL for a live artifact');
    expect(await (await fetch(first.download_url)).text()).toBe('batch a');
    const err = await caught(() => client.downloadUrls([]));
    expect(err).toMatchObject({ code: 'invalid_request', status: 400 });
  });

  it('iterateArtifacts walks every page (limit 2 over 5 artifacts → 3 requests)', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.unshift((await client.uploadBytes(`it-${i}`, { filename: `${i}.txt`, sessionId: 'iter-s' })).artifact_id);
    }
    const counter = countingFetch();
    const counted = clientFor(s, { fetch: counter.fetch });
    const seen: string[] = [];
    for await (const rec of counted.iterateArtifacts({ sessionId: 'iter-s', limit: 2 })) seen.push(rec.artifact_id);
    expect(seen).toEqual(made);
    expect(counter.calls).toHaveLength(3);
    expect(counter.calls[0]).toContain('limit=2');
    expect(counter.calls[1]).toContain('cursor=');
  });

  it('iterateArtifacts over an empty result yields nothing', async () => {
    const seen = [];
    for await (const rec of client.iterateArtifacts({ sessionId: 'nobody-here' })) seen.push(rec);
    expect(seen).toEqual([]);
  });
});

describe('deleteArtifact and errors', () => {
  it('deletes once; then reads and deletes are typed 410 errors', async () => {
    const up = await client.uploadBytes('bye', { filename: 'bye.txt' });
    const del = await client.deleteArtifact(up.artifact_id);
    expect(del).toMatchObject({ artifact_id: up.artifact_id, deleted: true });
    expect(del.deleted_at).toMatch(ISO_MS);
    const again = await caught(() => client.deleteArtifact(up.artifact_id));
    expect(again).toBeInstanceOf(CairnError);
    expect(again).toMatchObject({ code: 'artifact_already_deleted', status: 410, retryAfter: null });
    expect(await caught(() => client.getArtifact(up.artifact_id))).toMatchObject({ status: 410 });
  });

  it('an unknown id is artifact_not_found; a wrong key is unauthorized', async () => {
    const missing = await caught(() => client.getArtifact('art_AAAAAAAAAAAAAAAA'));
    expect(missing).toMatchObject({ name: 'CairnError', code: 'artifact_not_found', status: 404 });
    expect((missing as Error).message).toBeTruthy();
    const wrong = clientFor(s, { apiKey: 'ak_live_00000000000000000000000000000000' });
    expect(await caught(() => wrong.whoami())).toMatchObject({ code: 'unauthorized', status: 401 });
  });

  it('another tenant cannot see the artifact', async () => {
    const up = await client.uploadBytes('mine', { filename: 'mine.txt' });
    const other = clientFor(s, { apiKey: await s.createTenant('other', 'pro') });
    expect(await caught(() => other.getArtifact(up.artifact_id))).toMatchObject({ code: 'artifact_not_found' });
  });

  it('a plan limit carries upgradeUrl', async () => {
    const free = clientFor(s, { apiKey: await s.createTenant('free-co', 'free') });
    const err = await caught(() => free.uploadBytes('x', { filename: 'x.txt', ttl: '3650d' }));
    expect(err).toMatchObject({ code: 'ttl_exceeds_plan_limit', status: 400 });
    expect(typeof (err as CairnError).upgradeUrl).toBe('string');
  });

  it('an unreachable server is network_error with status 0', async () => {
    const dead = new (client.constructor as typeof CairnClient)({
      apiKey: s.apiKey,
      baseUrl: 'http://127.0.0.1:1',
      maxRetries: 0,
    });
    const err = await caught(() => dead.whoami());
    expect(err).toBeInstanceOf(CairnError);
    expect(err).toMatchObject({ code: 'network_error', status: 0, retryAfter: null });
  });
});

describe('listLinks, iterateLinks, revokeLink', () => {
  it('lists the links made, newest first, and a revoked one stops working at once', async () => {
    const up = await client.uploadBytes('linked', { filename: 'linked.txt' });
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await client.createLink(up.artifact_id, { expiresIn: 3600 + i }));
    const page = await client.listLinks(up.artifact_id, { limit: 2 });
    expect(page.has_more).toBe(true);
    expect(page.links).toHaveLength(2);
    const all = [];
    for await (const l of client.iterateLinks(up.artifact_id, { limit: 2 })) all.push(l.link_id);
    expect(all.sort()).toEqual(made.map((l) => l.link_id).sort());
    const target = made[1]!;
    expect(await client.revokeLink(target.link_id)).toEqual({ link_id: target.link_id, revoked: true });
    expect((await fetch(target.url)).status).toBe(404);
    expect(await client.revokeLink(target.link_id)).toEqual({ link_id: target.link_id, revoked: true });
    const left = (await client.listLinks(up.artifact_id)).links.map((l) => l.link_id);
    expect(left.sort()).toEqual([made[0]!.link_id, made[2]!.link_id].sort());
    const err = await caught(() => client.listLinks('art_0000000000000000'));
    expect(err).toBeInstanceOf(CairnError);
    expect((err as CairnError).code).toBe('artifact_not_found');
  });
});
