import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/api/app.js';
import { ManualClock } from '../../src/ports/clock.js';
import { type ApiResult, expectError, put, uploadJson, uploadMultipart } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 7, 3, 10, 0, 0));

beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

/** Every route of a Fastify instance, from its printed route tree. */
function routesOf(tree: string): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.+?)(?: \(([^)]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = (m[1] ?? '').length / 4;
    const full = (depth > 0 ? (stack[depth - 1] ?? '') : '') + (m[2] ?? '');
    stack[depth] = full;
    stack.length = depth + 1;
    for (const method of (m[3] ?? '').split(',').map((x) => x.trim())) {
      if (method) out.push({ method, path: full });
    }
  }
  return out;
}

describe('error envelope', () => {
  it('every error code the API can produce uses {error:{code,message,status}}', async () => {
    const key = await s.createTenant('errors', 'free');
    const a = await put(s.apiUrl, key, 'err', { session_id: 'err-sess', ttl: '1h' });
    const gone = await put(s.apiUrl, key, 'gone');
    await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${gone.artifact_id}`);
    await api(s.apiUrl, key, 'POST', '/v1/sessions/err-sess/seal');

    const cases: [Promise<ApiResult>, number, string][] = [
      [api(s.apiUrl, key, 'GET', '/v1/artifacts?bogus=1'), 400, 'invalid_request'],
      [api(s.apiUrl, key, 'POST', '/v1/artifacts', '{not json'), 400, 'invalid_request'],
      [uploadJson(s.apiUrl, key, { filename: 'x', content: 'eA==', ttl: '200d' }), 400, 'ttl_exceeds_plan_limit'],
      [api(s.apiUrl, null, 'GET', '/v1/artifacts'), 401, 'unauthorized'],
      [api(s.apiUrl, 'ak_live_short', 'GET', '/v1/artifacts'), 401, 'unauthorized'],
      [api(s.apiUrl, key, 'GET', '/v1/artifacts/art_0000000000000000'), 404, 'artifact_not_found'],
      [api(s.apiUrl, key, 'POST', '/v1/sessions/nobody/seal'), 404, 'session_not_found'],
      [uploadMultipart(s.apiUrl, key, { content: 'late', before: { session_id: 'err-sess' } }), 409, 'session_sealed'],
      [api(s.apiUrl, key, 'GET', `/v1/artifacts/${gone.artifact_id}`), 410, 'artifact_already_deleted'],
      [
        uploadJson(s.apiUrl, key, { filename: 'big', content: Buffer.alloc(10_485_761).toString('base64') }),
        413,
        'file_too_large',
      ],
      [
        api(s.apiUrl, key, 'POST', '/v1/artifacts', '<x/>', { 'content-type': 'application/xml' }),
        415,
        'unsupported_media_type',
      ],
    ];
    for (const [pending, status, code] of cases) expectError(await pending, status, code);

    clock.advance(3_600_000);
    expectError(await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`), 410, 'artifact_expired');
    const quota = await s.core.tenants.byName('errors');
    await s.core.tenants.setSuspended(quota, true);
    expectError(await api(s.apiUrl, key, 'GET', '/v1/whoami'), 401, 'unauthorized');
    await s.core.tenants.setSuspended(quota, false);
  });

  it('unknown routes, wrong methods and malformed URLs still get the envelope', async () => {
    for (const r of [
      await api(s.apiUrl, s.apiKey, 'GET', '/v2/artifacts'),
      await api(s.apiUrl, s.apiKey, 'PATCH', '/v1/artifacts'),
      await api(s.apiUrl, null, 'GET', '/nothing-here'),
    ]) {
      expect(r.status).toBe(404);
      expect(Object.keys(r.json)).toEqual(['error']);
      expect(r.json.error).toMatchObject({ status: 404, code: expect.any(String), message: expect.any(String) });
    }
    const badUrl = await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts/%E0%A4%A');
    expect([400, 404]).toContain(badUrl.status);
    expect(badUrl.json.error.status).toBe(badUrl.status);
    const longSegment = await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts/${'a'.repeat(2000)}`);
    expect([400, 404]).toContain(longSegment.status);
    expect(longSegment.json.error.status).toBe(longSegment.status);
  });

  it('5xx-free: a server error envelope never leaks internals (none reachable with valid input)', async () => {
    // Exercise odd but legal inputs that a careless implementation turns into 500s.
    const odd = [
      await api(
        s.apiUrl,
        s.apiKey,
        'GET',
        `/v1/artifacts?metadata.k=${encodeURIComponent("'; DROP TABLE artifacts; --")}`,
      ),
      await api(s.apiUrl, s.apiKey, 'GET', `/v1/artifacts?filename=${encodeURIComponent('%_*')}`),
      await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?created_after=9999-12-31T23:59:59Z'),
      await api(s.apiUrl, s.apiKey, 'GET', '/v1/artifacts?created_before=0001-01-01T00:00:00Z'),
      await uploadJson(s.apiUrl, s.apiKey, { filename: '𝔘𝔫𝔦𝔠𝔬𝔡𝔢.txt', content: '', metadata: { 'a-b': null } }),
    ];
    for (const r of odd) expect(r.status, r.text).toBeLessThan(500);
  });
});

describe('unknown query parameters', () => {
  it('are invalid_request on every route, and the call does nothing', async () => {
    const key = await s.createTenant('strict-query', 'pro');
    const a = await put(s.apiUrl, key, 'strict', { session_id: 'strict-sess' });
    const upload = { filename: 'q.txt', content: Buffer.from('q').toString('base64') };
    const calls: [string, string, unknown?][] = [
      ['GET', '/v1/whoami'],
      ['GET', `/v1/artifacts/${a.artifact_id}`],
      ['GET', `/v1/artifacts/${a.artifact_id}/download-url`],
      ['DELETE', `/v1/artifacts/${a.artifact_id}`],
      ['POST', `/v1/artifacts/${a.artifact_id}/links`, {}],
      ['POST', '/v1/artifacts', upload],
      ['GET', '/v1/sessions'],
      ['POST', '/v1/sessions/strict-sess/seal'],
      ['POST', `/v1/artifacts/${a.artifact_id}/publish`, { visibility: 'unlisted' }],
      ['DELETE', `/v1/artifacts/${a.artifact_id}/publish`],
      ['POST', '/v1/artifacts/upload-url', { filename: 'p.bin', size_bytes: 1 }],
      ['POST', `/v1/artifacts/${a.artifact_id}/complete`],
      ['GET', '/health'],
      ['GET', '/v1/openapi.json'],
      ['GET', '/v1/public/pages/pg_0000000000000000/gate-info'],
      ['POST', '/v1/public/pages/pg_0000000000000000/unlock', { password: 'x' }],
    ];
    for (const [method, path, body] of calls) {
      const r = await api(s.apiUrl, key, method, `${path}?bogus=1`, body);
      expectError(r, 400, 'invalid_request');
      expect(r.json.error.message, `${method} ${path}`).toMatch(/bogus/);
    }
    // Nothing happened: still there, not sealed, not published, no second artifact, no link.
    expect((await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`)).json.page).toBeNull();
    const sessions = (await api(s.apiUrl, key, 'GET', '/v1/sessions')).json.sessions;
    expect(sessions).toMatchObject([{ session_id: 'strict-sess', is_sealed: false }]);
    expect((await api(s.apiUrl, key, 'GET', '/v1/artifacts')).json.artifacts).toHaveLength(1);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(0);
  });
});

describe('rate-limit headers', () => {
  it('are on every authenticated response, success or error', async () => {
    const key = await s.createTenant('headers', 'pro');
    const a = await put(s.apiUrl, key, 'headers');
    const responses = [
      await api(s.apiUrl, key, 'GET', '/v1/whoami'),
      await api(s.apiUrl, key, 'GET', '/v1/artifacts'),
      await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`),
      await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}/download-url`),
      await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`, {}),
      await api(s.apiUrl, key, 'GET', '/v1/sessions'),
      await uploadMultipart(s.apiUrl, key, { content: 'h' }),
      await api(s.apiUrl, key, 'GET', '/v1/artifacts?bogus=1'),
      await api(s.apiUrl, key, 'GET', '/v1/artifacts/art_0000000000000000'),
      await api(s.apiUrl, key, 'POST', '/v1/sessions/none/seal'),
      await uploadJson(s.apiUrl, key, { filename: 'x', content: '!!' }),
      await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`),
      await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${a.artifact_id}`),
    ];
    let previous = Number.POSITIVE_INFINITY;
    for (const r of responses) {
      expect(r.headers.get('x-ratelimit-limit'), r.text).toBe('200');
      const remaining = Number(r.headers.get('x-ratelimit-remaining'));
      expect(Number.isInteger(remaining)).toBe(true);
      // The clock stands still, so every call uses up one more of the same window.
      expect(remaining).toBeLessThan(previous);
      previous = remaining;
      const reset = Number(r.headers.get('x-ratelimit-reset'));
      expect(reset).toBeGreaterThan(clock.now() / 1000);
      expect(reset).toBeLessThanOrEqual(clock.now() / 1000 + 2);
    }
    // Unauthenticated responses carry them too (the client IP's window): see rate-headers.test.ts.
    expect((await api(s.apiUrl, null, 'GET', '/health')).headers.get('x-ratelimit-limit')).toBe('200');
  });
});

describe('GET /v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document that lists every route the API server has', async () => {
    const r = await api(s.apiUrl, null, 'GET', '/v1/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.json;
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info?.title).toEqual(expect.any(String));
    expect(doc.info?.version).toEqual(expect.any(String));

    const app = await buildApiApp(s.core, { logLevel: 'silent' });
    await app.ready();
    const routes = routesOf(app.printRoutes({ commonPrefix: false }));
    await app.close();
    expect(routes.length).toBeGreaterThan(8);
    const missing: string[] = [];
    for (const { method, path } of routes) {
      if (method === 'HEAD' || path === '/v1/openapi.json') continue;
      const oaPath = path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      if (!doc.paths?.[oaPath]?.[method.toLowerCase()]) missing.push(`${method} ${path}`);
    }
    expect(missing).toEqual([]);
    // The contract's core routes are all there.
    for (const [method, path] of [
      ['get', '/health'],
      ['get', '/v1/whoami'],
      ['post', '/v1/artifacts'],
      ['get', '/v1/artifacts'],
      ['get', '/v1/artifacts/{id}'],
      ['delete', '/v1/artifacts/{id}'],
      ['get', '/v1/artifacts/{id}/download-url'],
      ['post', '/v1/artifacts/{id}/links'],
      ['get', '/v1/sessions'],
      ['post', '/v1/sessions/{id}/seal'],
    ]) {
      expect(doc.paths?.[path as string]?.[method as string], `${method} ${path}`).toBeDefined();
    }
  });

  it('describes the record as API.md does: which fields may be null, and the page summary', async () => {
    const doc = (await api(s.apiUrl, null, 'GET', '/v1/openapi.json')).json;
    type Schema = {
      type?: string | string[];
      properties?: Record<string, Schema>;
      enum?: string[];
      required?: string[];
    };
    const schemas = doc.components.schemas as Record<string, Schema>;
    const artifact = schemas.Artifact!;
    const session = schemas.Session!;
    const types = (x: Schema | undefined) => [x?.type].flat();
    for (const field of ['session_id', 'agent_id', 'expires_at']) {
      expect(types(artifact.properties![field]), field).toEqual(['string', 'null']);
    }
    for (const field of ['artifact_id', 'filename', 'content_type', 'content_hash', 'created_at']) {
      expect(types(artifact.properties![field]), field).toEqual(['string']);
    }
    const page = artifact.properties!.page!;
    expect(types(page)).toEqual(['object', 'null']);
    expect(page.required?.sort()).toEqual(['public_url', 'visibility']);
    expect(page.properties!.visibility!.enum).toEqual(['unlisted', 'public']);
    expect(types(session.properties!.sealed_at)).toEqual(['string', 'null']);
    expect(doc.paths['/v1/artifacts'].get.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ArtifactList',
    });
    expect(types(schemas.Pagination!.properties!.next_cursor)).toEqual(['string', 'null']);
  });
});
