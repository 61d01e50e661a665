import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ART_ID, ISO_MS, put } from '../helpers/e2e.js';
import { type ForeignRequest, type ForeignResponse, type Framing, foreign } from '../helpers/foreign-http.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Cairn driven the way other people's clients drive it (docs/api.md, "Compatibility"), not
 * through our SDK: raw HTTP shaped like common clients. The first cases are the request shapes a
 * third-party MCP server written for the hosted service sends, which Cairn once refused.
 */

let s: TestServer;
let n = 0;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s?.close();
});

/** A request with the key, shaped as given. */
const call = (req: ForeignRequest, key = s.apiKey): Promise<ForeignResponse> =>
  foreign(s.apiUrl, { ...req, headers: { Authorization: `Bearer ${key}`, ...req.headers } });

/** The envelope with the given status and code. */
function expectEnvelope(r: ForeignResponse, status: number, code: string): void {
  expect(r.status, r.text).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(r.json.error).toMatchObject({ code, status });
  expect(typeof r.json.error.message).toBe('string');
}

const framings: Framing[] = ['length', 'chunked', 'none'];

/** Publishes a Markdown artifact (a new one unless given) behind a password; its slug. */
async function passwordPage(filename: string, password: string, artifactId?: string): Promise<string> {
  const id = artifactId ?? (await put(s.apiUrl, s.apiKey, `# ${filename}`, { filename })).artifact_id;
  const pub = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${id}/publish`, {
    visibility: 'unlisted',
    access: 'password',
    password,
  });
  expect(pub.status, pub.text).toBe(200);
  return pub.json.page_id;
}
/** What the third-party client puts on every request, body or not. */
const JSON_ALWAYS = { 'Content-Type': 'application/json', Accept: 'application/json' };
const empty = (framing: Framing) => ({ headers: JSON_ALWAYS, framing, body: framing === 'none' ? undefined : '' });

describe('bodyless calls with a JSON content type (empty body: Content-Length 0, chunked with no bytes, no length)', () => {
  it.each(framings)('POST /v1/sessions/{id}/seal answers the seal (%s)', async (framing) => {
    const session = `seal-${framing}-${++n}`;
    await put(s.apiUrl, s.apiKey, 'in the session', { session_id: session });
    const r = await call({ method: 'POST', path: `/v1/sessions/${session}/seal`, ...empty(framing) });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      session_id: session,
      status: 'sealed',
      sealed_at: expect.stringMatching(ISO_MS),
      artifact_count: 1,
    });
  });

  it.each(framings)('DELETE /v1/artifacts/{id} soft-deletes (%s)', async (framing) => {
    const a = await put(s.apiUrl, s.apiKey, `delete me ${framing}`);
    const r = await call({ method: 'DELETE', path: `/v1/artifacts/${a.artifact_id}`, ...empty(framing) });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ artifact_id: a.artifact_id, deleted: true, deleted_at: expect.stringMatching(ISO_MS) });
    expectEnvelope(
      await call({ method: 'DELETE', path: `/v1/artifacts/${a.artifact_id}`, ...empty(framing) }),
      410,
      'artifact_already_deleted',
    );
  });

  it.each(framings)('DELETE /v1/artifacts/{id}/publish unpublishes (%s)', async (framing) => {
    const a = await put(s.apiUrl, s.apiKey, `# page ${framing}`, { filename: 'p.md' });
    const pub = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${a.artifact_id}/publish`, {
      visibility: 'unlisted',
    });
    expect(pub.status, pub.text).toBe(200);
    const r = await call({ method: 'DELETE', path: `/v1/artifacts/${a.artifact_id}/publish`, ...empty(framing) });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ page_id: pub.json.page_id, unpublished: true });
  });

  it.each(framings)('DELETE /v1/links/{link_id} revokes the link (%s)', async (framing) => {
    const a = await put(s.apiUrl, s.apiKey, `shared ${framing}`);
    const link = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {});
    expect(link.status, link.text).toBe(201);
    const r = await call({ method: 'DELETE', path: `/v1/links/${link.json.link_id}`, ...empty(framing) });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ link_id: link.json.link_id, revoked: true });
    const listed = await call({ method: 'GET', path: `/v1/artifacts/${a.artifact_id}/links`, ...empty(framing) });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json).toEqual({ links: [], next_cursor: null, has_more: false });
  });

  it.each(framings)('POST /v1/artifacts/{id}/complete finishes a presigned upload (%s)', async (framing) => {
    const bytes = Buffer.from(`presigned bytes ${framing}`);
    const ticket = await api(s.apiUrl, s.apiKey, 'POST', '/v1/artifacts/upload-url', {
      filename: `pre-${framing}.txt`,
      size_bytes: bytes.length,
    });
    expect(ticket.status, ticket.text).toBe(201);
    const landed = await fetch(ticket.json.upload_url, {
      method: 'PUT',
      body: bytes,
      headers: ticket.json.upload_headers,
    });
    expect(landed.status).toBe(200);
    const r = await call({
      method: 'POST',
      path: `/v1/artifacts/${ticket.json.artifact_id}/complete`,
      ...empty(framing),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      artifact_id: ticket.json.artifact_id,
      filename: `pre-${framing}.txt`,
      size_bytes: bytes.length,
    });
  });

  it.each(framings)(
    'POST /v1/artifacts/{id}/links takes the defaults from an empty JSON body (%s)',
    async (framing) => {
      const a = await put(s.apiUrl, s.apiKey, `link me ${framing}`);
      const r = await call({ method: 'POST', path: `/v1/artifacts/${a.artifact_id}/links`, ...empty(framing) });
      expect(r.status, r.text).toBe(201);
      expect(r.json.artifact_id).toBe(a.artifact_id);
      const days = (Date.parse(r.json.expires_at) - Date.parse(r.json.created_at)) / 86_400_000;
      expect(days).toBe(7);
    },
  );

  it.each(framings)('a route that needs a body names what is missing (%s)', async (framing) => {
    const a = await put(s.apiUrl, s.apiKey, `needs body ${framing}`, { filename: 'n.md' });
    const publish = await call({ method: 'POST', path: `/v1/artifacts/${a.artifact_id}/publish`, ...empty(framing) });
    expectEnvelope(publish, 400, 'invalid_request');
    expect(publish.json.error.message).toContain('visibility');
    const ticket = await call({ method: 'POST', path: '/v1/artifacts/upload-url', ...empty(framing) });
    expectEnvelope(ticket, 400, 'invalid_request');
    expect(ticket.json.error.message).toMatch(/filename/);
    const upload = await call({ method: 'POST', path: '/v1/artifacts', ...empty(framing) });
    expectEnvelope(upload, 400, 'invalid_request');
    expect(upload.json.error.message).toMatch(/filename/);
    expect(upload.json.error.message).toMatch(/content/);
  });

  it.each(framings)('an empty body of any other type is no body either (%s)', async (framing) => {
    const a = await put(s.apiUrl, s.apiKey, `typed ${framing}`, { session_id: `typed-${framing}` });
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream']) {
      const headers = { 'Content-Type': type };
      const body = framing === 'none' ? undefined : '';
      const link = await call({ method: 'POST', path: `/v1/artifacts/${a.artifact_id}/links`, headers, body, framing });
      expect(link.status, `${type} ${link.text}`).toBe(201);
    }
    const seal = await call({
      method: 'POST',
      path: `/v1/sessions/typed-${framing}/seal`,
      headers: { 'Content-Type': 'text/plain' },
      body: framing === 'none' ? undefined : '',
      framing,
    });
    expect(seal.status, seal.text).toBe(200);
    // With bytes in it, such a body is still refused.
    const bytes = await call({
      method: 'POST',
      path: `/v1/sessions/typed-${framing}/seal`,
      headers: { 'Content-Type': 'text/plain' },
      body: 'seal it',
      framing: framing === 'none' ? 'length' : framing,
    });
    expectEnvelope(bytes, 415, 'unsupported_media_type');
  });

  it('a bodyless route still refuses a body with fields it does not take', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'not deleted');
    const r = await call({
      method: 'DELETE',
      path: `/v1/artifacts/${a.artifact_id}`,
      headers: JSON_ALWAYS,
      body: '{"force":true}',
    });
    expectEnvelope(r, 400, 'invalid_request');
    expect(r.json.error.message).toContain('force');
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}`)).status).toBe(200);
    // An empty object is no field at all.
    const ok = await call({
      method: 'DELETE',
      path: `/v1/artifacts/${a.artifact_id}`,
      headers: JSON_ALWAYS,
      body: '{}',
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.artifact_id).toMatch(ART_ID);
  });
});

describe('unknown JSON fields are refused on every route, and the call does nothing', () => {
  const withField = (body: Record<string, unknown>) => ({
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });

  it('POST /v1/artifacts/{id}/publish', async () => {
    const a = await put(s.apiUrl, s.apiKey, '# unknown', { filename: 'u.md' });
    const r = await call({
      method: 'POST',
      path: `/v1/artifacts/${a.artifact_id}/publish`,
      ...withField({ visibility: 'unlisted', colour: 'red' }),
    });
    expectEnvelope(r, 400, 'invalid_request');
    expect(r.json.error.message).toContain("'colour'");
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}`)).json.page).toBeNull();
  });

  it('DELETE /v1/artifacts/{id}/publish', async () => {
    const a = await put(s.apiUrl, s.apiKey, '# stays up', { filename: 'up.md' });
    const pub = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${a.artifact_id}/publish`, {
      visibility: 'unlisted',
    });
    const r = await call({
      method: 'DELETE',
      path: `/v1/artifacts/${a.artifact_id}/publish`,
      ...withField({ force: true }),
    });
    expectEnvelope(r, 400, 'invalid_request');
    expect(r.json.error.message).toContain("'force'");
    expect((await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${a.artifact_id}`)).json.page.public_url).toBe(
      pub.json.public_url,
    );
  });

  it('POST /v1/artifacts/{id}/links, POST /v1/artifacts/upload-url, POST /v1/sessions/{id}/seal', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'no link', { session_id: 'unknown-fields' });
    const linksBefore = (await api(s.apiUrl, s.apiKey, 'GET', '/v1/whoami')).json.active_links;
    const link = await call({
      method: 'POST',
      path: `/v1/artifacts/${a.artifact_id}/links`,
      ...withField({ expires_in: 60, note: 'x' }),
    });
    expectEnvelope(link, 400, 'invalid_request');
    expect(link.json.error.message).toContain("'note'");
    expect((await api(s.apiUrl, s.apiKey, 'GET', '/v1/whoami')).json.active_links).toBe(linksBefore);
    const ticket = await call({
      method: 'POST',
      path: '/v1/artifacts/upload-url',
      ...withField({ filename: 'a', size_bytes: 1, md5: 'x' }),
    });
    expectEnvelope(ticket, 400, 'invalid_request');
    expect(ticket.json.error.message).toContain("'md5'");
    const seal = await call({
      method: 'POST',
      path: '/v1/sessions/unknown-fields/seal',
      ...withField({ reason: 'done' }),
    });
    expectEnvelope(seal, 400, 'invalid_request');
    expect(
      (await api(s.apiUrl, s.apiKey, 'GET', '/v1/sessions')).json.sessions.find(
        (x: { session_id: string }) => x.session_id === 'unknown-fields',
      ).is_sealed,
    ).toBe(false);
  });

  it('POST /v1/public/pages/{slug}/unlock', async () => {
    const slug = await passwordPage('locked.md', 'hunter22');
    const r = await foreign(s.apiUrl, {
      method: 'POST',
      path: `/v1/public/pages/${slug}/unlock`,
      ...withField({ password: 'hunter22', remember: true }),
    });
    expectEnvelope(r, 400, 'invalid_request');
    expect(r.json.error.message).toContain("'remember'");
    const ok = await foreign(s.apiUrl, {
      method: 'POST',
      path: `/v1/public/pages/${slug}/unlock`,
      ...withField({ password: 'hunter22' }),
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.expires_in).toBe(300);
  });
});

/** Header names in capitals, and a JSON type with a charset, as some clients spell them. */
const SHOUTING = { 'CONTENT-TYPE': 'application/json; charset=utf-8', ACCEPT: '*/*', 'USER-AGENT': 'foreign/1.0' };
const shout = (req: ForeignRequest, key = s.apiKey) =>
  foreign(s.apiUrl, { ...req, headers: { AUTHORIZATION: `Bearer ${key}`, ...SHOUTING, ...req.headers } });

/** A JSON body sent chunked in pieces of 7 bytes. */
const chunkedJson = (body: unknown) => ({ body: JSON.stringify(body), framing: 'chunked' as const, chunkSize: 7 });

describe('every route, called the way other clients call it', () => {
  it('GET /health and /v1/whoami with capitalised headers', async () => {
    const health = await foreign(s.apiUrl, { method: 'GET', path: '/health', headers: SHOUTING });
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });
    const who = await shout({ method: 'GET', path: '/v1/whoami' });
    expect(who.status, who.text).toBe(200);
    expect(who.json).toMatchObject({ tenant_name: 'main', plan: 'pro', api_key_last_4: s.apiKey.slice(-4) });
    expect(who.headers['x-ratelimit-limit']).toBe('200');
  });

  it('POST /v1/artifacts: a JSON body sent chunked, then listed with repeated metadata keys', async () => {
    const up = await shout({
      method: 'POST',
      path: '/v1/artifacts',
      headers: { 'IDEMPOTENCY-KEY': 'foreign-chunked-1' },
      ...chunkedJson({
        filename: 'chunked.txt',
        content: Buffer.from('sent in chunks').toString('base64'),
        session_id: 'foreign-tour',
        metadata: { source: 'foreign', step: 1 },
      }),
    });
    expect(up.status, up.text).toBe(201);
    expect(up.json).toMatchObject({
      filename: 'chunked.txt',
      size_bytes: 14,
      metadata: { source: 'foreign', step: 1 },
    });
    const listed = await shout({
      method: 'GET',
      path: '/v1/artifacts?metadata.source=foreign&metadata.step=1&limit=5',
    });
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.artifacts.map((a: { artifact_id: string }) => a.artifact_id)).toEqual([up.json.artifact_id]);
    // The same parameter twice is refused, not one of them ignored.
    const twice = await shout({ method: 'GET', path: '/v1/artifacts?session_id=foreign-tour&session_id=other' });
    expectEnvelope(twice, 400, 'invalid_request');
    expect(twice.json.error.message).toContain('session_id');
  });

  it('POST /v1/artifacts: multipart/form-data whose fields come after the file', async () => {
    const boundary = '----ForeignBoundary7MA4YWxkTrZu0gW';
    const body = [
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="late.md"\r\nContent-Type: text/markdown\r\n\r\n# late fields\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="session_id"\r\n\r\nforeign-tour\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"source":"multipart"}\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="ttl"\r\n\r\n7d\r\n`,
      `--${boundary}--\r\n`,
    ].join('');
    const r = await shout({
      method: 'POST',
      path: '/v1/artifacts',
      headers: { 'CONTENT-TYPE': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(r.status, r.text).toBe(201);
    expect(r.json).toMatchObject({
      filename: 'late.md',
      content_type: 'text/markdown',
      size_bytes: 13,
      session_id: 'foreign-tour',
      metadata: { source: 'multipart' },
    });
    expect(Date.parse(r.json.expires_at) - Date.parse(r.json.created_at)).toBe(7 * 86_400_000);
    // The same upload chunked.
    const chunked = await shout({
      method: 'POST',
      path: '/v1/artifacts',
      headers: { 'CONTENT-TYPE': `multipart/form-data; boundary=${boundary}` },
      body,
      framing: 'chunked',
      chunkSize: 16,
    });
    expect(chunked.status, chunked.text).toBe(201);
    expect(chunked.json.content_hash).toBe(r.json.content_hash);
  });

  it('GET, download-url, batch download-urls, links and DELETE on one artifact', async () => {
    const a = await put(s.apiUrl, s.apiKey, 'tour bytes', { filename: 'tour.txt' });
    const got = await shout({ method: 'GET', path: `/v1/artifacts/${a.artifact_id}` });
    expect(got.status).toBe(200);
    expect(got.json).toEqual({ ...a, page: null });
    const url = await shout({ method: 'GET', path: `/v1/artifacts/${a.artifact_id}/download-url` });
    expect(url.status).toBe(200);
    expect(url.json).toMatchObject({ expires_in: 3600, filename: 'tour.txt', size_bytes: 10 });
    expect(await (await fetch(url.json.download_url)).text()).toBe('tour bytes');
    const batch = await shout({
      method: 'POST',
      path: '/v1/artifacts/batch/download-urls',
      ...chunkedJson({ artifact_ids: [a.artifact_id] }),
    });
    expect(batch.status, batch.text).toBe(200);
    expect(batch.json.download_urls[0]).toMatchObject({ artifact_id: a.artifact_id, filename: 'tour.txt' });
    const link = await shout({
      method: 'POST',
      path: `/v1/artifacts/${a.artifact_id}/links`,
      ...chunkedJson({ expires_in: 3600 }),
    });
    expect(link.status, link.text).toBe(201);
    expect(Date.parse(link.json.expires_at) - Date.parse(link.json.created_at)).toBe(3_600_000);
    const del = await shout({ method: 'DELETE', path: `/v1/artifacts/${a.artifact_id}` });
    expect(del.status, del.text).toBe(200);
    expect(del.json).toMatchObject({ artifact_id: a.artifact_id, deleted: true });
    expectEnvelope(
      await shout({ method: 'GET', path: `/v1/artifacts/${a.artifact_id}` }),
      410,
      'artifact_already_deleted',
    );
  });

  it('presigned: upload-url sent chunked, the PUT, complete with an empty JSON body', async () => {
    const bytes = Buffer.from('presigned through a foreign client');
    const ticket = await shout({
      method: 'POST',
      path: '/v1/artifacts/upload-url',
      ...chunkedJson({ filename: 'foreign-pre.txt', size_bytes: bytes.length }),
    });
    expect(ticket.status, ticket.text).toBe(201);
    expect(ticket.json).toMatchObject({ status: 'pending', upload_method: 'PUT' });
    const landed = await fetch(ticket.json.upload_url, {
      method: 'PUT',
      body: bytes,
      headers: ticket.json.upload_headers,
    });
    expect(landed.status).toBe(200);
    const done = await shout({ method: 'POST', path: `/v1/artifacts/${ticket.json.artifact_id}/complete`, body: '' });
    expect(done.status, done.text).toBe(200);
    expect(done.json).toMatchObject({ artifact_id: ticket.json.artifact_id, size_bytes: bytes.length });
  });

  it('sessions: list and seal', async () => {
    await put(s.apiUrl, s.apiKey, 'session tour', { session_id: 'foreign-seal' });
    const list = await shout({ method: 'GET', path: '/v1/sessions?limit=200' });
    expect(list.status).toBe(200);
    expect(list.json.sessions.find((x: { session_id: string }) => x.session_id === 'foreign-seal')).toMatchObject({
      artifact_count: 1,
      is_sealed: false,
    });
    const seal = await shout({ method: 'POST', path: '/v1/sessions/foreign-seal/seal', body: '', framing: 'chunked' });
    expect(seal.status, seal.text).toBe(200);
    expect(seal.json).toMatchObject({ session_id: 'foreign-seal', status: 'sealed', artifact_count: 1 });
  });

  it('pages: publish (chunked, with a charset), gate-info, unlock, report, unpublish', async () => {
    const a = await put(s.apiUrl, s.apiKey, '# gated tour', { filename: 'gated.md' });
    const pub = await shout({
      method: 'POST',
      path: `/v1/artifacts/${a.artifact_id}/publish`,
      ...chunkedJson({ visibility: 'unlisted', access: 'password', password: 'tour-secret', title: 'Tour' }),
    });
    expect(pub.status, pub.text).toBe(200);
    expect(pub.json).toMatchObject({ visibility: 'unlisted', access: 'password' });
    const slug = pub.json.page_id as string;
    const gate = await foreign(s.apiUrl, {
      method: 'GET',
      path: `/v1/public/pages/${slug}/gate-info`,
      headers: SHOUTING,
    });
    expect(gate.status).toBe(200);
    expect(gate.json).toEqual({ exists: true, access: 'password' });
    const unlock = await foreign(s.apiUrl, {
      method: 'POST',
      path: `/v1/public/pages/${slug}/unlock`,
      headers: SHOUTING,
      ...chunkedJson({ password: 'tour-secret' }),
    });
    expect(unlock.status, unlock.text).toBe(200);
    expect(unlock.json).toMatchObject({ content_token: expect.any(String), expires_in: 300 });
    for (const framing of framings) {
      const report = await foreign(s.apiUrl, {
        method: 'POST',
        path: `/v1/public/pages/${slug}/report`,
        ...empty(framing),
      });
      expect(report.status, report.text).toBe(202);
      expect(report.json).toEqual({ received: true });
    }
    const off = await shout({ method: 'DELETE', path: `/v1/artifacts/${slug}/publish` });
    expect(off.status, off.text).toBe(200);
    expect(off.json).toEqual({ page_id: slug, unpublished: true });
  });

  it('GET /v1/openapi.json lists every route above', async () => {
    const doc = await foreign(s.apiUrl, { method: 'GET', path: '/v1/openapi.json', headers: SHOUTING });
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.json.paths)).toEqual(
      expect.arrayContaining([
        '/health',
        '/v1/whoami',
        '/v1/artifacts',
        '/v1/artifacts/{id}',
        '/v1/artifacts/{id}/download-url',
        '/v1/artifacts/batch/download-urls',
        '/v1/artifacts/{id}/links',
        '/v1/links/{link_id}',
        '/v1/artifacts/upload-url',
        '/v1/artifacts/{id}/complete',
        '/v1/sessions',
        '/v1/sessions/{id}/seal',
        '/v1/artifacts/{id}/publish',
        '/v1/public/pages/{slug}/gate-info',
        '/v1/public/pages/{slug}/unlock',
        '/v1/public/pages/{slug}/report',
      ]),
    );
  });
});

describe('HEAD on every GET route answers what GET would, without a body', () => {
  it.each([
    ['/health', false],
    ['/v1/whoami', true],
    ['/v1/artifacts?limit=1', true],
    ['/v1/sessions?limit=1', true],
    ['/v1/openapi.json', false],
  ])('HEAD %s', async (path, auth) => {
    const req: ForeignRequest = {
      method: 'GET',
      path,
      headers: auth ? { Authorization: `Bearer ${s.apiKey}` } : ({} as Record<string, string>),
    };
    const get = await foreign(s.apiUrl, req);
    const head = await foreign(s.apiUrl, { ...req, method: 'HEAD' });
    expect(head.status).toBe(get.status);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.text).toBe('');
    expect(head.headers['x-ratelimit-limit']).toBeDefined();
  });

  it('HEAD on an artifact, its download-url, a gate-info, and without a key', async () => {
    const a = await put(s.apiUrl, s.apiKey, '# head', { filename: 'head.md' });
    const slug = await passwordPage('head.md', 'head-secret', a.artifact_id);
    for (const [path, status] of [
      [`/v1/artifacts/${a.artifact_id}`, 200],
      [`/v1/artifacts/${a.artifact_id}/download-url`, 200],
      ['/v1/artifacts/art_0000000000000000', 404],
      [`/v1/public/pages/${slug}/gate-info`, 200],
      ['/v1/public/pages/pg_0000000000000000/gate-info', 404],
    ] as const) {
      const head = await call({ method: 'HEAD', path });
      expect(head.status, path).toBe(status);
      expect(head.headers['content-type'], path).toMatch(/^application\/json/);
      expect(head.text).toBe('');
    }
    const anonymous = await foreign(s.apiUrl, { method: 'HEAD', path: '/v1/whoami' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.text).toBe('');
  });
});
