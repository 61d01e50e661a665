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
    const link = await call({
      method: 'POST',
      path: `/v1/artifacts/${a.artifact_id}/links`,
      ...withField({ expires_in: 60, note: 'x' }),
    });
    expectEnvelope(link, 400, 'invalid_request');
    expect(link.json.error.message).toContain("'note'");
    expect((await api(s.apiUrl, s.apiKey, 'GET', '/v1/whoami')).json.active_links).toBe(0);
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
    const a = await put(s.apiUrl, s.apiKey, '# locked', { filename: 'locked.md' });
    const pub = await api(s.apiUrl, s.apiKey, 'POST', `/v1/artifacts/${a.artifact_id}/publish`, {
      visibility: 'unlisted',
      access: 'password',
      password: 'hunter22',
    });
    expect(pub.status, pub.text).toBe(200);
    const r = await foreign(s.apiUrl, {
      method: 'POST',
      path: `/v1/public/pages/${pub.json.page_id}/unlock`,
      ...withField({ password: 'hunter22', remember: true }),
    });
    expectEnvelope(r, 400, 'invalid_request');
    expect(r.json.error.message).toContain("'remember'");
    const ok = await foreign(s.apiUrl, {
      method: 'POST',
      path: `/v1/public/pages/${pub.json.page_id}/unlock`,
      ...withField({ password: 'hunter22' }),
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.expires_in).toBe(300);
  });
});
