import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLANS } from '../../src/core/plans.js';
import { expectError, put } from '../helpers/e2e.js';
import { connectHttpMcp, type HttpMcp, initializeMessage, postMcp } from '../helpers/hosted.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { data } from '../mcp/mcp-client.js';
import { ALL_TOOLS } from '../mcp/tool-counts.js';

/** `{api}/mcp` with a raw API key: the same tool table as stdio, run against the core for the key's tenant. */

let srv: TestServer;
let mcp: HttpMcp;

beforeAll(async () => {
  srv = await startTestServer();
  mcp = await connectHttpMcp(srv.apiUrl, srv.apiKey);
});
afterAll(async () => {
  await mcp?.close();
  await srv?.close();
});

describe('hosted MCP with an API key', () => {
  it('lists every tool (no local destructive gating) and answers whoami with the key’s tenant', async () => {
    const tools = (await mcp.client.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toHaveLength(ALL_TOOLS);
    expect(tools.find((t) => t.name === 'delete_artifact')?.annotations?.destructiveHint).toBe(true);
    expect(data(await mcp.call('whoami'))).toMatchObject({
      tenant_name: 'main',
      plan: 'pro',
      api_key_last_4: srv.apiKey.slice(-4),
    });
    expect(mcp.client.getServerVersion()?.name).toBe('cairn');
  });

  it('stores, lists, reads and deletes through the core, and the API sees the same artifact', async () => {
    const stored = data(
      await mcp.call('store_artifact', {
        filename: 'hosted.md',
        content: Buffer.from('# from the hosted endpoint\n').toString('base64'),
        session_id: 'hosted-s1',
        model: 'test-model',
      }),
    );
    expect(stored).toMatchObject({ filename: 'hosted.md', content_type: 'text/markdown', session_id: 'hosted-s1' });
    expect(stored.metadata).toEqual({ model: 'test-model' });
    const viaApi = await api(srv.apiUrl, srv.apiKey, 'GET', `/v1/artifacts/${stored.artifact_id}`);
    expect(viaApi.json.content_hash).toBe(stored.content_hash);

    const urls = data(await mcp.call('get_artifact_download_urls', { artifact_ids: [stored.artifact_id] }));
    expect(urls.download_urls).toEqual([
      expect.objectContaining({ artifact_id: stored.artifact_id, filename: 'hosted.md', expires_in: 3600 }),
    ]);
    expect(await (await fetch(urls.download_urls[0].download_url)).text()).toBe('# from the hosted endpoint\n');

    const listed = data(await mcp.call('list_artifacts', { session_id: 'hosted-s1' }));
    expect(listed.artifacts.map((a: { artifact_id: string }) => a.artifact_id)).toEqual([stored.artifact_id]);
    const bytes = await mcp.client.readResource({ uri: `cairn://artifact/${stored.artifact_id}/bytes` });
    expect(bytes.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: '# from the hosted endpoint\n' });
    const session = await mcp.client.readResource({ uri: 'cairn://session/hosted-s1' });
    const view = session.contents[0];
    expect(JSON.parse(view && 'text' in view ? view.text : '')).toMatchObject({
      session_id: 'hosted-s1',
      artifact_count: 1,
    });

    const link = data(await mcp.call('create_download_link', { artifact_id: stored.artifact_id }));
    const links = data(await mcp.call('list_links', { artifact_id: stored.artifact_id, limit: 10 }));
    expect(links).toEqual({
      links: [{ link_id: link.link_id, url: link.url, expires_at: link.expires_at, created_at: link.created_at }],
      next_cursor: null,
      has_more: false,
    });
    expect(data(await mcp.call('revoke_link', { link_id: link.link_id }))).toEqual({
      link_id: link.link_id,
      revoked: true,
    });
    expect((await fetch(link.url)).status).toBe(404);

    const page = data(await mcp.call('publish_artifact', { artifact_id: stored.artifact_id, title: 'Hosted' }));
    expect(page.public_url).toMatch(/\/a\/pg_/);
    expect(data(await mcp.call('delete_artifact', { artifact_id: stored.artifact_id, confirm: true }))).toMatchObject({
      deleted: true,
    });
    expectError(
      await api(srv.apiUrl, srv.apiKey, 'GET', `/v1/artifacts/${stored.artifact_id}`),
      410,
      'artifact_already_deleted',
    );
  });

  it('refuses `path` uploads clearly: the hosted server has no local files', async () => {
    const r = await mcp.call('store_artifact', { filename: 'x.txt', path: '/etc/hostname' });
    expect(r.isError).toBe(true);
    expect(r._meta).toMatchObject({ code: 'invalid_request' });
    expect(JSON.stringify(r.content)).toMatch(/local \(stdio\)|send the bytes as `content`/);
  });

  it("another tenant's artifact or link is artifact_not_found, by tool and by resource", async () => {
    const otherKey = await srv.createTenant('other-hosted');
    const theirs = await put(srv.apiUrl, otherKey, 'not yours');
    const r = await mcp.call('get_artifact', { artifact_id: theirs.artifact_id });
    expect(r._meta).toMatchObject({ status: 404, code: 'artifact_not_found' });
    const d = await mcp.call('delete_artifact', { artifact_id: theirs.artifact_id, confirm: true });
    expect(d._meta).toMatchObject({ code: 'artifact_not_found' });
    const theirLink = await api(srv.apiUrl, otherKey, 'POST', `/v1/artifacts/${theirs.artifact_id}/links`);
    const revoked = await mcp.call('revoke_link', { link_id: theirLink.json.link_id });
    expect(revoked.isError).toBe(true);
    expect(revoked._meta).toMatchObject({ status: 404, code: 'artifact_not_found' });
    expect((await fetch(theirLink.json.url)).status).toBe(200);
    await expect(mcp.client.readResource({ uri: `cairn://artifact/${theirs.artifact_id}` })).rejects.toThrow(
      /not found/i,
    );
    expect((await api(srv.apiUrl, otherKey, 'GET', `/v1/artifacts/${theirs.artifact_id}`)).status).toBe(200);
  });
});

describe('the HTTP edge of /mcp', () => {
  it('401 with a WWW-Authenticate pointing at the protected-resource metadata, without or with a bad bearer', async () => {
    const missing = await postMcp(srv.apiUrl, initializeMessage);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${srv.apiUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(JSON.parse(missing.text).error).toMatchObject({ code: 'unauthorized', status: 401 });
    const bad = await postMcp(srv.apiUrl, initializeMessage, { authorization: 'Bearer mcp_at_nope' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", resource_metadata="/);
  });

  it('a suspended account is 401 unauthorized naming the suspension, on the endpoint and in a tool', async () => {
    const key = await srv.createTenant('hosted-suspended', 'pro');
    const open = await connectHttpMcp(srv.apiUrl, key);
    try {
      await srv.core.tenants.setSuspended(await srv.core.tenants.byName('hosted-suspended'), true);
      const r = await postMcp(srv.apiUrl, initializeMessage, { authorization: `Bearer ${key}` });
      expect(r.status, r.text).toBe(401);
      expect(JSON.parse(r.text).error).toMatchObject({ code: 'unauthorized', status: 401 });
      expect(JSON.parse(r.text).error.message).toMatch(/suspended/);
      // A connection opened before: its next call gets the same answer.
      await expect(open.call('whoami')).rejects.toThrow(/suspended/);
    } finally {
      await open.close();
    }
  });

  it('admits every request like an API call: rate-limit headers and the monthly counter', async () => {
    const month = new Date().toISOString().slice(0, 7);
    const tenant = (await srv.core.deps.tenantStore.getTenantByName('main'))!;
    await srv.core.requests.flush();
    const before = await srv.core.deps.tenantStore.getRequestCount(tenant.id, month);
    const r = await postMcp(srv.apiUrl, initializeMessage, { authorization: `Bearer ${srv.apiKey}` });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('x-ratelimit-limit')).toBe(String(PLANS.pro.rateLimitBurst));
    expect(Number(r.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(0);
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(JSON.parse(r.text).result.serverInfo.name).toBe('cairn');
    await srv.core.requests.flush();
    expect(await srv.core.deps.tenantStore.getRequestCount(tenant.id, month)).toBe(before + 1);
  });

  it('refuses foreign Origins and rebound Host names, accepts loopback ones and no Origin', async () => {
    const auth = { authorization: `Bearer ${srv.apiKey}` };
    const evilOrigin = await postMcp(srv.apiUrl, initializeMessage, { ...auth, origin: 'https://evil.example' });
    expect(evilOrigin.status).toBe(403);
    expect(JSON.parse(evilOrigin.text).error.code).toBe('origin_not_allowed');
    const port = new URL(srv.apiUrl).port;
    const evilHost = await postMcp(srv.apiUrl, initializeMessage, { ...auth, host: `evil.example:${port}` });
    expect(evilHost.status).toBe(403);
    for (const origin of [srv.apiUrl, 'http://localhost:6274']) {
      expect((await postMcp(srv.apiUrl, initializeMessage, { ...auth, origin })).status).toBe(200);
    }
    expect((await postMcp(srv.apiUrl, initializeMessage, { ...auth, host: `localhost:${port}` })).status).toBe(200);
  });

  it('is stateless: GET and DELETE are 405 with Allow: POST', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${srv.apiUrl}/mcp`, { method, headers: { authorization: `Bearer ${srv.apiKey}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    }
  });

  it('gives each request a fresh server: concurrent clients do not see each other', async () => {
    const otherKey = await srv.createTenant('parallel-b');
    const other = await connectHttpMcp(srv.apiUrl, otherKey, 'client-b');
    try {
      const [a, b] = await Promise.all([mcp.call('whoami'), other.call('whoami')]);
      expect(data(a).tenant_name).toBe('main');
      expect(data(b).tenant_name).toBe('parallel-b');
    } finally {
      await other.close();
    }
  });
});
