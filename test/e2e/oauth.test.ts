import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/core/accounts/secrets.js';
import { hostedInstructions } from '../../src/mcp/instructions.js';
import { ManualClock } from '../../src/ports/clock.js';
import { put } from '../helpers/e2e.js';
import {
  connectHttpMcp,
  connectMcpSubscriber,
  hiddenField,
  initializeMessage,
  oauthTokens,
  pkcePair,
  postMcp,
  registerClient,
  tokenRequest,
  WebUser,
} from '../helpers/hosted.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { data } from '../mcp/mcp-client.js';
import { ALL_TOOLS } from '../mcp/tool-counts.js';

/** The OAuth 2.1 server in front of the hosted MCP endpoint, driven over plain HTTP (the browser suite does it in Chromium). */

let srv: TestServer;
let user: WebUser;
let userEmail: string;
const REDIRECT = 'http://127.0.0.1:9/callback';
let n = 0;
const email = () => `person${++n}-${Date.now()}@example.com`;

const mcpStatus = async (bearer: string) =>
  (await postMcp(srv.apiUrl, initializeMessage, { authorization: `Bearer ${bearer}` })).status;

function authorizeParams(clientId: string, challenge: string, extra: Record<string, string> = {}) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
    ...extra,
  };
}

beforeAll(async () => {
  srv = await startTestServer();
  user = new WebUser(srv.apiUrl);
  userEmail = email();
  await user.signUp(userEmail);
});
afterAll(async () => {
  await srv?.close();
});

describe('discovery and registration', () => {
  it('publishes protected-resource metadata (both locations) and authorization-server metadata', async () => {
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const r = await api(srv.apiUrl, null, 'GET', path);
      expect(r.json).toMatchObject({
        resource: `${srv.apiUrl}/mcp`,
        authorization_servers: [srv.apiUrl],
        scopes_supported: ['openid'],
      });
    }
    const as = await api(srv.apiUrl, null, 'GET', '/.well-known/oauth-authorization-server');
    expect(as.json).toMatchObject({
      issuer: srv.apiUrl,
      authorization_endpoint: `${srv.apiUrl}/oauth/authorize`,
      token_endpoint: `${srv.apiUrl}/oauth/token`,
      registration_endpoint: `${srv.apiUrl}/oauth/register`,
      revocation_endpoint: `${srv.apiUrl}/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['openid'],
    });
  });

  it('registers public clients only, with https or loopback redirect URIs', async () => {
    const reg = (body: Record<string, unknown>) => api(srv.apiUrl, null, 'POST', '/oauth/register', body);
    const ok = await reg({
      client_name: 'Good',
      redirect_uris: ['https://app.example/cb', 'http://localhost:3000/cb'],
    });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ client_name: 'Good', token_endpoint_auth_method: 'none' });
    expect(ok.json.client_secret).toBeUndefined();
    const cases: [Record<string, unknown>, string][] = [
      [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], client_secret: 's3cret' }, 'invalid_client_metadata'],
      [{ redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example/cb#frag'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    ];
    for (const [body, error] of cases) {
      const r = await reg(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error).toBe(error);
      expect(typeof r.json.error_description).toBe('string');
    }
  });
});

describe('authorization code flow', () => {
  it('sends a signed-out user to log in first, then shows the consent screen with the client, "unverified" and the redirect URI', async () => {
    const client = await registerClient(srv.apiUrl, [REDIRECT], 'Shown Name');
    const params = new URLSearchParams(authorizeParams(client.client_id, pkcePair().challenge));
    const anonymous = await new WebUser(srv.apiUrl).request('GET', `/oauth/authorize?${params}`);
    expect(anonymous.status).toBe(303);
    expect(anonymous.location).toBe(`/login?next=${encodeURIComponent(`/oauth/authorize?${params}`)}`);

    const consent = await user.request('GET', `/oauth/authorize?${params}`);
    expect(consent.status).toBe(200);
    expect(consent.text).toContain('Shown Name');
    expect(consent.text).toContain('data-unverified');
    expect(consent.text).toContain(REDIRECT);
    for (const scope of ['artifacts:read', 'artifacts:write', 'artifacts:destroy'])
      expect(consent.text).toContain(scope);
    const csp = consent.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' http://127.0.0.1:9");
  });

  it('grants a tier; calls outside it fail with insufficient_scope naming the scope; re-consent broadens it', async () => {
    const t = await oauthTokens(srv.apiUrl, user, 'read');
    const mcp = await connectHttpMcp(srv.apiUrl, t.access);
    try {
      expect((await mcp.client.listTools()).tools).toHaveLength(ALL_TOOLS);
      // The instructions say what this grant refuses and how to lift it.
      expect(mcp.client.getInstructions()).toBe(hostedInstructions('read'));
      expect(data(await mcp.call('whoami')).api_key_last_4).toBe(t.access.slice(-4));
      const refused = await mcp.call('store_artifact', { filename: 'a.txt', content: 'aGk=' });
      expect(refused.isError).toBe(true);
      expect(refused._meta).toMatchObject({
        code: 'insufficient_scope',
        status: 403,
        required_scope: 'artifacts:write',
      });
      expect(JSON.stringify(refused.content)).toContain('artifacts:write');

      // Authorizing the same client again replaces the tier of its grant, tokens included.
      const again = await user.authorize(
        { ...authorizeParams(t.clientId, pkcePair().challenge), resource: `${srv.apiUrl}/mcp` },
        'destroy',
      );
      expect(again.searchParams.get('code')).toMatch(/^mcp_ac_/);
      const stored = data(await mcp.call('store_artifact', { filename: 'a.txt', content: 'aGk=' }));
      expect(data(await mcp.call('delete_artifact', { artifact_id: stored.artifact_id, confirm: true })).deleted).toBe(
        true,
      );
    } finally {
      await mcp.close();
    }
  });

  it('refuses a wrong or missing PKCE verifier, a reused code (revoking what it issued) and a redirect URI mismatch', async () => {
    const client = await registerClient(srv.apiUrl, [REDIRECT]);
    const codeFor = async () => {
      const { verifier, challenge } = pkcePair();
      const back = await user.authorize(authorizeParams(client.client_id, challenge), 'read');
      expect(back.searchParams.get('state')).toBe('xyz');
      expect(back.searchParams.get('iss')).toBe(srv.apiUrl);
      return { code: back.searchParams.get('code') ?? '', verifier };
    };
    const exchange = (code: string, extra: Record<string, string>) =>
      tokenRequest(srv.apiUrl, {
        grant_type: 'authorization_code',
        code,
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        ...extra,
      });

    const a = await codeFor();
    const wrong = await exchange(a.code, { code_verifier: pkcePair().verifier });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toBe('invalid_grant');
    const b = await codeFor();
    expect((await exchange(b.code, {})).json.error).toBe('invalid_grant');
    const c = await codeFor();
    expect(
      (await exchange(c.code, { code_verifier: c.verifier, redirect_uri: 'http://127.0.0.1:9/other' })).json.error,
    ).toBe('invalid_grant');

    const d = await codeFor();
    const first = await exchange(d.code, { code_verifier: d.verifier });
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid artifacts:read' });
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(await mcpStatus(first.json.access_token)).toBe(200);
    const replay = await exchange(d.code, { code_verifier: d.verifier });
    expect(replay.json.error).toBe('invalid_grant');
    expect(await mcpStatus(first.json.access_token)).toBe(401);
  });

  it('authorize: unknown client or unregistered redirect URI is an error page; bad scope, resource or PKCE go back as errors', async () => {
    const client = await registerClient(srv.apiUrl, [REDIRECT]);
    const { challenge } = pkcePair();
    const get = (p: Record<string, string>) => user.request('GET', `/oauth/authorize?${new URLSearchParams(p)}`);

    const unknown = await get(authorizeParams('cli_unknown', challenge));
    expect(unknown.status).toBe(400);
    expect(unknown.location).toBeNull();
    const mismatch = await get(
      authorizeParams(client.client_id, challenge, { redirect_uri: 'https://evil.example/cb' }),
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.location).toBeNull();

    const redirected = async (p: Record<string, string>) => {
      const r = await get(p);
      expect(r.status).toBe(302);
      const url = new URL(r.location ?? '');
      expect(url.origin + url.pathname).toBe(REDIRECT);
      expect(url.searchParams.get('state')).toBe('xyz');
      return url.searchParams.get('error');
    };
    expect(await redirected(authorizeParams(client.client_id, challenge, { scope: 'artifacts:destroy' }))).toBe(
      'invalid_scope',
    );
    expect(await redirected(authorizeParams(client.client_id, challenge, { scope: 'openid profile' }))).toBe(
      'invalid_scope',
    );
    expect(
      await redirected(authorizeParams(client.client_id, challenge, { resource: 'https://other.example/mcp' })),
    ).toBe('invalid_target');
    expect(await redirected({ ...authorizeParams(client.client_id, challenge), code_challenge_method: 'plain' })).toBe(
      'invalid_request',
    );
    const { code_challenge: _dropped, ...noPkce } = authorizeParams(client.client_id, challenge);
    expect(await redirected(noPkce)).toBe('invalid_request');
    expect((await get(authorizeParams(client.client_id, challenge, { scope: 'openid' }))).status).toBe(200);
  });

  it('the fixed public client takes any loopback redirect URI (any port), and nothing else', async () => {
    const { verifier, challenge } = pkcePair();
    const redirect = 'http://127.0.0.1:54321/oauth/callback';
    const back = await user.authorize(
      {
        response_type: 'code',
        client_id: 'cairn-public',
        redirect_uri: redirect,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      'write',
    );
    const r = await tokenRequest(srv.apiUrl, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      code_verifier: verifier,
      client_id: 'cairn-public',
      redirect_uri: redirect,
    });
    expect(r.json.scope).toBe('openid artifacts:write');
    const page = await user.request(
      'GET',
      `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'cairn-public', redirect_uri: 'https://app.example/cb', code_challenge: challenge, code_challenge_method: 'S256' })}`,
    );
    expect(page.status).toBe(400);
  });

  it('refuses the consent form without its CSRF token: no code is issued', async () => {
    const client = await registerClient(srv.apiUrl, [REDIRECT]);
    const params = authorizeParams(client.client_id, pkcePair().challenge);
    const r = await user.request('POST', '/oauth/authorize', { ...params, tier: 'destroy', decision: 'approve' });
    expect(r.status).toBe(403);
    expect(r.location).toBeNull();
    const forged = await user.request('POST', '/oauth/authorize', {
      ...params,
      tier: 'destroy',
      decision: 'approve',
      csrf: 'x',
    });
    expect(forged.status).toBe(403);
    const me = await srv.server.accounts.store.getUserByEmail(userEmail);
    const grants = await srv.server.accounts.store.listGrants(me?.user.id ?? '');
    expect(grants.map((g) => g.clientId)).not.toContain(client.client_id);
  });
});

describe('dashboard forms', () => {
  it('refuse every POST without a valid CSRF token (403 page), and another session’s token', async () => {
    const before = (await user.request('GET', '/dashboard/keys')).text.match(/data-key=/g)?.length ?? 0;
    for (const [path, form] of [
      ['/dashboard/keys', {}],
      ['/dashboard/keys', { csrf: 'forged' }],
      ['/logout', {}],
      ['/dashboard/apps/grt_x/revoke', {}],
    ] as const) {
      const r = await user.request('POST', path, form);
      expect(r.status, path).toBe(403);
      expect(r.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    const other = new WebUser(srv.apiUrl);
    await other.signUp(email());
    const theirs = hiddenField((await other.request('GET', '/dashboard/keys')).text, 'csrf');
    expect((await user.request('POST', '/dashboard/keys', { csrf: theirs })).status).toBe(403);
    expect((await user.request('GET', '/dashboard/keys')).text.match(/data-key=/g)?.length ?? 0).toBe(before);
    // Still signed in: the refused log-out did nothing.
    expect((await user.request('GET', '/dashboard')).status).toBe(200);
  });

  it("acts only as the user's tenant: another tenant's artifact and key are out of reach", async () => {
    const otherKey = await srv.createTenant('dash-other');
    const theirs = await put(srv.apiUrl, otherKey, 'theirs');
    const page = await user.request('GET', `/dashboard/artifacts/${theirs.artifact_id}`);
    expect(page.status).toBe(404);
    expect(page.text).not.toContain(theirs.content_hash);
    const keys = await user.request('GET', '/dashboard/keys');
    const csrf = hiddenField(keys.text, 'csrf');
    expect((await user.request('POST', `/dashboard/artifacts/${theirs.artifact_id}/delete`, { csrf })).status).toBe(
      404,
    );
    const otherKeyId = (
      await srv.core.deps.tenantStore.listApiKeys((await srv.core.deps.tenantStore.getTenantByName('dash-other'))!.id)
    )[0]!.id;
    expect((await user.request('POST', `/dashboard/keys/${otherKeyId}/revoke`, { csrf })).status).toBe(400);
    expect((await api(srv.apiUrl, otherKey, 'GET', `/v1/artifacts/${theirs.artifact_id}`)).status).toBe(200);
  });

  it('sign-up creates a Free tenant named after the email, made unique; emails are unique in any case', async () => {
    const stamp = Date.now();
    const a = new WebUser(srv.apiUrl);
    await a.signUp(`twin${stamp}@one.example`);
    const b = new WebUser(srv.apiUrl);
    await b.signUp(`TWIN${stamp}@two.example`);
    const nameA = (await srv.server.accounts.store.getUserByEmail(`twin${stamp}@one.example`))?.tenant;
    const nameB = (await srv.server.accounts.store.getUserByEmail(`twin${stamp}@two.example`))?.tenant;
    expect(nameA).toMatchObject({ name: `twin${stamp}`, plan: 'free' });
    expect(nameB?.name).toMatch(new RegExp(`^twin${stamp}-[a-z0-9]{5}$`));
    const again = await new WebUser(srv.apiUrl).submit('/signup', '/signup', {
      email: `Twin${stamp}@One.Example`,
      password: 'long enough password',
      next: '/dashboard',
    });
    expect(again.status).toBe(400);
    expect(again.text).toContain('already exists');
  });

  it('sign-up and login forms need their pre-session token too; a wrong password is refused', async () => {
    const fresh = new WebUser(srv.apiUrl);
    expect((await fresh.request('POST', '/signup', { email: email(), password: 'long enough pw' })).status).toBe(403);
    const bad = await fresh.submit('/login', '/login', { email: userEmail, password: 'wrong password!' });
    expect(bad.status).toBe(401);
    expect(bad.text).toContain('Wrong email or password');
  });
});

describe('tokens', () => {
  it('an OAuth MCP session hears its subscriptions, keeps its id through a refresh, and is no other grant’s', async () => {
    const reader = await oauthTokens(srv.apiUrl, user, 'read');
    const m = await connectMcpSubscriber(srv.apiUrl, reader.access);
    const writer = await connectHttpMcp(srv.apiUrl, (await oauthTokens(srv.apiUrl, user, 'write')).access);
    try {
      expect(await m.streamOpened).toBe(200);
      // Resources are in the Read tier: a read grant may subscribe.
      await m.client.subscribeResource({ uri: 'cairn://session/oauth-run' });
      const stored = data(
        await writer.call('store_artifact', { filename: 'o.txt', content: 'aGk=', session_id: 'oauth-run' }),
      );
      expect(stored.session_id).toBe('oauth-run');
      expect(await m.nextUpdate()).toBe('cairn://session/oauth-run');

      const sessionId = m.transport.sessionId as string;
      const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
      const next = await tokenRequest(srv.apiUrl, {
        grant_type: 'refresh_token',
        refresh_token: reader.refresh,
        client_id: reader.clientId,
      });
      expect(next.status).toBe(200);
      const refreshed = { authorization: `Bearer ${next.json.access_token}`, 'mcp-session-id': sessionId };
      expect((await postMcp(srv.apiUrl, ping, refreshed)).status).toBe(200);
      // The writer's grant is the same user's, but another connection: the session is not its.
      const other = await oauthTokens(srv.apiUrl, user, 'write');
      const foreign = { authorization: `Bearer ${other.access}`, 'mcp-session-id': sessionId };
      expect((await postMcp(srv.apiUrl, ping, foreign)).status).toBe(404);
    } finally {
      await Promise.allSettled([m.close(), writer.close()]);
    }
  });

  it('rotates refresh tokens; replaying a rotated one revokes the connection', async () => {
    const t = await oauthTokens(srv.apiUrl, user, 'read');
    const next = await tokenRequest(srv.apiUrl, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh,
      client_id: t.clientId,
    });
    expect(next.status).toBe(200);
    expect(next.json.refresh_token).not.toBe(t.refresh);
    expect(await mcpStatus(next.json.access_token)).toBe(200);
    const replay = await tokenRequest(srv.apiUrl, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh,
      client_id: t.clientId,
    });
    expect(replay.json.error).toBe('invalid_grant');
    expect(await mcpStatus(next.json.access_token)).toBe(401);
    expect(
      (await tokenRequest(srv.apiUrl, { grant_type: 'refresh_token', refresh_token: next.json.refresh_token })).json
        .error,
    ).toBe('invalid_grant');
  });

  it('revocation: /oauth/revoke (only by the token’s client) and the dashboard’s connected apps end access', async () => {
    const t = await oauthTokens(srv.apiUrl, user, 'read');
    const other = await tokenRequest(srv.apiUrl, { token: t.refresh, client_id: 'cli_someone_else' }, '/oauth/revoke');
    expect(other.status).toBe(200);
    expect(await mcpStatus(t.access)).toBe(200);
    const revoked = await tokenRequest(srv.apiUrl, { token: t.refresh, client_id: t.clientId }, '/oauth/revoke');
    expect(revoked.status).toBe(200);
    expect(await mcpStatus(t.access)).toBe(401);

    const u = await oauthTokens(srv.apiUrl, user, 'write');
    const apps = await user.request('GET', '/dashboard/apps');
    expect(apps.text).toContain('Test Agent');
    const grantId = /data-grant="(grt_[A-Za-z0-9]+)"[\s\S]*?data-tier="write"/.exec(apps.text)?.[1] ?? '';
    const done = await user.request('POST', `/dashboard/apps/${grantId}/revoke`, {
      csrf: hiddenField(apps.text, 'csrf'),
    });
    expect(done.status).toBe(200);
    expect(await mcpStatus(u.access)).toBe(401);
  });

  it('refuses a token bound to another resource, and access tokens on the REST API', async () => {
    const t = await oauthTokens(srv.apiUrl, user, 'read');
    const r = await api(srv.apiUrl, t.access, 'GET', '/v1/whoami');
    expect(r.status).toBe(401);
    expect(r.json.error.code).toBe('unauthorized');
    const viaToken = await tokenRequest(srv.apiUrl, {
      grant_type: 'refresh_token',
      refresh_token: t.refresh,
      client_id: t.clientId,
      resource: 'https://other.example/mcp',
    });
    expect(viaToken.json.error).toBe('invalid_target');

    // A token whose binding is another resource (as if minted for another server) is refused at /mcp.
    const found = await srv.server.accounts.store.findToken(hashSecret(t.access), 'access');
    const foreign = `mcp_at_${'F'.repeat(43)}`;
    await srv.server.accounts.store.createTokens([
      { ...found!.token, hash: hashSecret(foreign), resource: 'https://other.example/mcp' },
    ]);
    expect(await mcpStatus(foreign)).toBe(401);
    expect(await mcpStatus(t.access)).toBe(200);
  });

  it('access tokens expire after an hour; the refresh token then gets a new one', async () => {
    const clock = new ManualClock(Date.UTC(2026, 5, 1));
    const timed = await startTestServer({ clock });
    try {
      const person = new WebUser(timed.apiUrl);
      await person.signUp(email());
      const t = await oauthTokens(timed.apiUrl, person, 'read');
      const status = async (bearer: string) =>
        (await postMcp(timed.apiUrl, initializeMessage, { authorization: `Bearer ${bearer}` })).status;
      clock.advance(3599_000);
      expect(await status(t.access)).toBe(200);
      clock.advance(2_000);
      expect(await status(t.access)).toBe(401);
      const next = await tokenRequest(timed.apiUrl, {
        grant_type: 'refresh_token',
        refresh_token: t.refresh,
        client_id: t.clientId,
      });
      expect(await status(next.json.access_token)).toBe(200);
    } finally {
      await timed.close();
    }
  });
});
