import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { put } from '../helpers/e2e.js';
import { connectHttpMcp, pkcePair, registerClient, tokenRequest } from '../helpers/hosted.js';
import { api, type TestServer } from '../helpers/server.js';
import { data } from '../mcp/mcp-client.js';

/**
 * The hosted MCP connection and the dashboard in real Chromium: an MCP client registers, the
 * person signs up and consents in the browser, the code arrives on the client's loopback redirect
 * URI, and the SDK's Streamable HTTP client calls tools with the token. No page runs any script.
 */

let s: TestServer;
let page: Page;
/** Every API-origin page the browser showed, with its CSP: each must forbid framing. */
let documents: { url: string; csp: string }[];

/** A native MCP client's redirect receiver on loopback: records each callback's query. */
async function startCallbackServer() {
  const hits: URL[] = [];
  const server = http.createServer((req, res) => {
    hits.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('You can close this window.');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const uri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return { uri, hits, close: () => new Promise<void>((r) => server.close(() => r())) };
}

useChromium({ per: 'test', context: { viewport: { width: 1200, height: 900 } } }, (session) => {
  ({ s, page } = session);
  documents = [];
  page.on('response', async (r) => {
    // Redirects render nothing; every page that is shown counts.
    const shown = r.status() < 300 || r.status() >= 400;
    if (shown && r.request().resourceType() === 'document' && r.url().startsWith(s.apiUrl)) {
      documents.push({ url: r.url(), csp: (await r.allHeaders())['content-security-policy'] ?? '' });
    }
  });
});

function expectNoFraming(): void {
  expect(documents.length).toBeGreaterThan(0);
  for (const d of documents) expect(d.csp, d.url).toContain("frame-ancestors 'none'");
}

async function clickAndWait(selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

describe.skipIf(skipBrowser)('OAuth connection in Chromium', () => {
  it('register → sign up → consent (Write) → code on loopback → PKCE exchange → tools; Destroy needs re-consent', async () => {
    const callback = await startCallbackServer();
    try {
      const client = await registerClient(s.apiUrl, [callback.uri], 'Browser Agent');
      const authorizeUrl = (challenge: string, state: string) =>
        `${s.apiUrl}/oauth/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: client.client_id,
          redirect_uri: callback.uri,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state,
          scope: 'openid',
          resource: `${s.apiUrl}/mcp`,
        })}`;
      const consentAndGetCode = async (tier: string, challenge: string, state: string) => {
        await page.goto(authorizeUrl(challenge, state));
        expect(await page.textContent('[data-client-name]')).toBe('Browser Agent');
        expect(await page.isVisible('[data-unverified]')).toBe(true);
        expect(await page.textContent('[data-redirect-uri]')).toBe(callback.uri);
        await page.check(`input[name="tier"][value="${tier}"]`);
        await clickAndWait('button[value="approve"]');
        const hit = callback.hits.at(-1);
        expect(hit?.searchParams.get('state')).toBe(state);
        return hit?.searchParams.get('code') ?? '';
      };
      const exchange = async (code: string, verifier: string) => {
        const r = await tokenRequest(s.apiUrl, {
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          client_id: client.client_id,
          redirect_uri: callback.uri,
          resource: `${s.apiUrl}/mcp`,
        });
        expect(r.status, JSON.stringify(r.json)).toBe(200);
        return r.json.access_token as string;
      };

      // Signed out: authorize sends the person to log in; they follow the link to sign up instead.
      const first = pkcePair();
      await page.goto(authorizeUrl(first.challenge, 'one'));
      expect(new URL(page.url()).pathname).toBe('/login');
      await clickAndWait('a[href^="/signup"]');
      await page.fill('#email', 'browser-user@example.com');
      await page.fill('#password', 'a very good password');
      await clickAndWait('button[type="submit"]');
      expect(new URL(page.url()).pathname).toBe('/oauth/authorize');
      await screenshot(page, 'hosted-consent');
      await page.check('input[name="tier"][value="write"]');
      await clickAndWait('button[value="approve"]');
      expect(page.url().startsWith(callback.uri)).toBe(true);
      const code = callback.hits.at(-1)?.searchParams.get('code') ?? '';
      const token = await exchange(code, first.verifier);

      const mcp = await connectHttpMcp(s.apiUrl, token, 'browser-agent');
      try {
        expect(data(await mcp.call('whoami')).tenant_name).toBe('browser-user');
        const stored = data(await mcp.call('store_artifact', { filename: 'b.txt', content: 'Ynl0ZXM=' }));
        const refused = await mcp.call('delete_artifact', { artifact_id: stored.artifact_id, confirm: true });
        expect(refused.isError).toBe(true);
        expect(refused._meta).toMatchObject({ code: 'insufficient_scope', required_scope: 'artifacts:destroy' });

        // Re-consent (still signed in) to Destroy: the grant broadens, and the new token works too.
        const second = pkcePair();
        const token2 = await exchange(await consentAndGetCode('destroy', second.challenge, 'two'), second.verifier);
        expect(
          data(await mcp.call('delete_artifact', { artifact_id: stored.artifact_id, confirm: true })).deleted,
        ).toBe(true);
        const mcp2 = await connectHttpMcp(s.apiUrl, token2);
        // Past the scope check, the call reaches the core (which knows no such session).
        expect((await mcp2.call('seal_session', { session_id: 'none-yet' }))._meta).toMatchObject({
          code: 'session_not_found',
        });
        await mcp2.close();
      } finally {
        await mcp.close();
      }
      expectNoFraming();
    } finally {
      await callback.close();
    }
  });
});

describe.skipIf(skipBrowser)('dashboard in Chromium', () => {
  it('sign up, overview, create a key (shown once), use it, revoke it (the API refuses it)', async () => {
    await page.goto(`${s.apiUrl}/signup`);
    await page.fill('#email', 'dash@example.com');
    await page.fill('#password', 'another good password');
    await clickAndWait('button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    expect(await page.textContent('[data-plan]')).toBe('Free');
    expect(await page.locator('meter').count()).toBe(4);
    expect(await page.textContent('[data-account]')).toContain('dash');

    await page.goto(`${s.apiUrl}/dashboard/keys`);
    await clickAndWait('form[action="/dashboard/keys"] button');
    const key = (await page.textContent('[data-secret]'))?.trim() ?? '';
    expect(key).toMatch(/^ak_live_[A-Za-z0-9]{32}$/);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.tenant_name).toBe('dash');
    await screenshot(page, 'dashboard-new-key');

    await page.goto(`${s.apiUrl}/dashboard/keys`);
    expect(await page.isVisible('[data-secret]')).toBe(false);
    expect(await page.content()).not.toContain(key);
    expect(await page.textContent('table')).toContain(`…${key.slice(-4)}`);
    await clickAndWait('[data-key] a[href$="/revoke"]');
    await clickAndWait('[data-confirm-button]');
    expect(await page.textContent('[role="status"]')).toMatch(/revoked/i);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).status).toBe(401);
    expectNoFraming();
  });

  it('artifacts: list with a filter, open one, publish, unpublish, delete', async () => {
    await page.goto(`${s.apiUrl}/signup`);
    await page.fill('#email', 'pages@example.com');
    await page.fill('#password', 'another good password');
    await clickAndWait('button[type="submit"]');
    await page.goto(`${s.apiUrl}/dashboard/keys`);
    await clickAndWait('form[action="/dashboard/keys"] button');
    const key = (await page.textContent('[data-secret]'))?.trim() ?? '';
    const a = await put(s.apiUrl, key, '# Notes\n', { filename: 'notes.md', session_id: 'sess-a' });
    await put(s.apiUrl, key, 'other', { filename: 'other.txt', session_id: 'sess-b' });

    await page.goto(`${s.apiUrl}/dashboard/artifacts`);
    expect(await page.locator('[data-artifact]').count()).toBe(2);
    await page.fill('#f-session_id', 'sess-a');
    await clickAndWait('.filters button[type="submit"]');
    expect(await page.locator('[data-artifact]').count()).toBe(1);
    await clickAndWait(`[data-artifact="${a.artifact_id}"] a`);
    expect(await page.textContent('[data-field="content_hash"]')).toBe(a.content_hash);

    await page.fill('#title', 'My notes');
    await clickAndWait(`form[action$="/publish"] button`);
    const publicUrl = (await page.getAttribute('[data-public-url]', 'href')) ?? '';
    expect(publicUrl).toMatch(/\/a\/pg_/);
    expect((await fetch(publicUrl)).status).toBe(200);

    await clickAndWait(`form[action$="/unpublish"] button`);
    expect(await page.getAttribute('[data-page-state]', 'data-page-state')).toBe('none');
    expect((await fetch(publicUrl)).status).toBe(404);

    await clickAndWait('a[href$="/delete"]');
    await clickAndWait('[data-confirm-button]');
    expect(new URL(page.url()).pathname).toBe('/dashboard/artifacts');
    expect(await page.locator(`[data-artifact="${a.artifact_id}"]`).count()).toBe(0);
    expect((await api(s.apiUrl, key, 'GET', `/v1/artifacts/${a.artifact_id}`)).status).toBe(410);

    await page.goto(`${s.apiUrl}/dashboard/apps`);
    await page.goto(`${s.apiUrl}/dashboard`);
    expectNoFraming();
  });
});
