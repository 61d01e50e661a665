import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { makePng, screenshot, skipBrowser, useChromium } from '../helpers/browser.js';
import { pkcePair, registerClient } from '../helpers/hosted.js';
import { publishContent } from '../helpers/pages.js';
import { api, type TestServer } from '../helpers/server.js';

/**
 * The dashboard as a person uses it, in real Chromium: what a click leaves of a page's settings,
 * confirmations, share links, and how the pages fit a phone.
 */

let s: TestServer;
let page: Page;

useChromium({ per: 'test', context: { viewport: { width: 1280, height: 900 } } }, (session) => {
  ({ s, page } = session);
});

async function clickAndWait(selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

let people = 0;
/** Signs a new person up in the browser and creates an API key there; optionally moves the tenant to Pro. */
async function signUp(plan: 'free' | 'pro' = 'free'): Promise<string> {
  people++;
  await page.goto(`${s.apiUrl}/signup`);
  await page.fill('#email', `person${people}@example.com`);
  await page.fill('#password', 'a good long password');
  await clickAndWait('button[type="submit"]');
  await page.goto(`${s.apiUrl}/dashboard/keys`);
  await clickAndWait('form[action="/dashboard/keys"] button');
  const key = (await page.textContent('[data-secret]'))?.trim() ?? '';
  if (plan === 'pro') {
    const { tenant } = await s.core.tenants.authenticate(key);
    await s.core.tenants.setPlan(tenant, 'pro');
  }
  return key;
}

const gateInfo = async (slug: string) =>
  (await api(s.apiUrl, null, 'GET', `/v1/public/pages/${slug}/gate-info`)).status;
const unlocks = async (slug: string, password: string) =>
  (await api(s.apiUrl, null, 'POST', `/v1/public/pages/${slug}/unlock`, { password })).status;

describe.skipIf(skipBrowser)('dashboard: a page keeps its settings', () => {
  it('"Update page" on a password page keeps its password and title; the page says it is gated; changing them works', async () => {
    const key = await signUp('pro');
    const { artifact, slug } = await publishContent(
      s,
      { filename: 'secret.md', content: '# Secret\n' },
      { visibility: 'public', access: 'password', password: 'hunter2hunter2', title: 'Board notes' },
      key,
    );
    const pageRow = async () => {
      const { tenant } = await s.core.tenants.authenticate(key);
      return s.core.deps.sharingStore.getPageForArtifact(tenant.id, artifact.artifact_id);
    };
    expect(await gateInfo(slug)).toBe(200);

    await page.goto(`${s.apiUrl}/dashboard/artifacts/${artifact.artifact_id}`);
    expect(await page.getAttribute('[data-page-access]', 'data-page-access')).toBe('password');
    expect(await page.textContent('[data-page-access]')).toMatch(/password required/i);
    expect(await page.inputValue('#title')).toBe('Board notes');
    expect(await page.inputValue('#visibility')).toBe('public');
    expect(await page.isChecked('input[name="access"][value="keep"]')).toBe(true);
    await screenshot(page, 'dashboard-artifact-1280');

    // One click, nothing changed: the gate, the title and the visibility stay.
    await clickAndWait('form[action$="/publish"] button');
    expect(await page.textContent('[role="status"]')).toMatch(/published/i);
    expect(await gateInfo(slug)).toBe(200);
    expect(await unlocks(slug, 'hunter2hunter2')).toBe(200);
    expect(await pageRow()).toMatchObject({ access: 'password', title: 'Board notes', visibility: 'public' });
    expect((await fetch(`${s.contentUrl}/c/${slug}`)).status).toBe(404);

    // A new password replaces the old one.
    await page.check('input[name="access"][value="password"]');
    await page.fill('#password', 'a brand new secret');
    await clickAndWait('form[action$="/publish"] button');
    expect(await unlocks(slug, 'hunter2hunter2')).toBe(401);
    expect(await unlocks(slug, 'a brand new secret')).toBe(200);

    // Opening the page is a choice the person makes; the title can be changed too.
    await page.check('input[name="access"][value="none"]');
    await page.fill('#title', 'Board notes, open');
    await clickAndWait('form[action$="/publish"] button');
    expect(await gateInfo(slug)).toBe(404);
    expect((await fetch(`${s.contentUrl}/c/${slug}`)).status).toBe(200);
    expect(await page.getAttribute('[data-page-access]', 'data-page-access')).toBe('none');
    expect(await pageRow()).toMatchObject({ access: 'none', title: 'Board notes, open' });

    // And gating it again from the dashboard.
    await page.check('input[name="access"][value="password"]');
    await page.fill('#password', 'third secret!');
    await clickAndWait('form[action$="/publish"] button');
    expect(await gateInfo(slug)).toBe(200);
    expect(await unlocks(slug, 'third secret!')).toBe(200);
  });

  it('a Free tenant is told why it cannot set a password, and an unchanged update keeps the title', async () => {
    const key = await signUp();
    const { artifact, slug } = await publishContent(
      s,
      { filename: 'open.txt', content: 'hello' },
      { visibility: 'unlisted', title: 'Hello page' },
      key,
    );
    await page.goto(`${s.apiUrl}/dashboard/artifacts/${artifact.artifact_id}`);
    expect(await page.textContent('.panel[data-page-state]')).toContain('Pro plan');
    expect(await page.locator('input[name="access"][value="password"]').count()).toBe(0);
    await clickAndWait('form[action$="/publish"] button');
    const { tenant } = await s.core.tenants.authenticate(key);
    expect(await s.core.deps.sharingStore.getPageForArtifact(tenant.id, artifact.artifact_id)).toMatchObject({
      access: 'none',
      title: 'Hello page',
      visibility: 'unlisted',
    });
    expect((await fetch(`${s.viewerUrl}/a/${slug}`)).status).toBe(200);
  });
});

describe.skipIf(skipBrowser)('dashboard basics', () => {
  it("a new tenant's overview says how to push a first file and connect MCP, with no raw field table; sizes in the CLI's units", async () => {
    await signUp();
    await page.goto(`${s.apiUrl}/dashboard`);
    expect(await page.isVisible('[data-getting-started]')).toBe(true);
    expect(await page.textContent('[data-getting-started]')).toContain('cairn push report.md');
    expect(await page.textContent('[data-mcp-url]')).toBe(`${s.apiUrl}/mcp`);
    expect(await page.locator('[data-field]').count()).toBe(0);
    // The Free plan's 1 GB is "1.0 GB" as the CLI says it, not "954 MB".
    expect(await page.textContent('[data-usage="Storage"]')).toContain('of 1.0 GB');
    await screenshot(page, 'dashboard-overview-1280');
  });

  it('an artifact page: download, preview, share links made and revoked after a confirmation, delete after a confirmation', async () => {
    const key = await signUp();
    const text = '# Findings\n\nThe numbers are in.\n';
    const { artifact } = await publishContent(
      s,
      { filename: 'findings.md', content: text },
      { visibility: 'unlisted' },
      key,
    );
    const id = artifact.artifact_id as string;
    await page.goto(`${s.apiUrl}/dashboard/artifacts/${id}`);
    const download = (await page.getAttribute('[data-download]', 'href')) ?? '';
    const got = await fetch(download);
    expect(got.headers.get('content-disposition')).toMatch(/^attachment/);
    expect(await got.text()).toBe(text);
    // Markdown previews rendered (sanitised, as on its page), not as raw text.
    expect(await page.textContent('[data-preview="markdown"] h1')).toBe('Findings');
    expect(await page.textContent('[data-preview="markdown"] p')).toBe('The numbers are in.');

    // Two links; revoke one: Cancel on the confirmation changes nothing, confirming kills it.
    await clickAndWait('[data-links] form button');
    expect(await page.textContent('[role="status"]')).toMatch(/share link created/i);
    await clickAndWait('[data-links] form button');
    const rows = page.locator('[data-link]');
    expect(await rows.count()).toBe(2);
    const [newest, older] = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-link') ?? ''));
    const urlOf = async (linkId: string) => (await page.getAttribute(`[data-link="${linkId}"] a[rel]`, 'href')) ?? '';
    const olderUrl = await urlOf(older ?? '');
    const newestUrl = await urlOf(newest ?? '');
    expect((await fetch(olderUrl)).status).toBe(200);
    await clickAndWait(`[data-link="${older}"] a[href*="/revoke"]`);
    expect(await page.textContent('[data-confirm]')).toContain('findings.md');
    await clickAndWait('[data-confirm] a.secondary');
    expect((await fetch(olderUrl)).status).toBe(200);
    await clickAndWait(`[data-link="${older}"] a[href*="/revoke"]`);
    await clickAndWait('[data-confirm-button]');
    expect(new URL(page.url()).pathname).toBe(`/dashboard/artifacts/${id}`);
    expect(await page.textContent('[role="status"]')).toMatch(/revoked/i);
    expect((await fetch(olderUrl)).status).toBe(404);
    expect((await fetch(newestUrl)).status).toBe(200);
    expect(await page.locator('[data-link]').count()).toBe(1);

    // Delete asks first; the artifact is still there until the person confirms.
    await clickAndWait('a[href$="/delete"]');
    expect(await page.textContent('[data-confirm]')).toContain('findings.md');
    expect((await api(s.apiUrl, key, 'GET', `/v1/artifacts/${id}`)).status).toBe(200);
    await clickAndWait('[data-confirm-button]');
    expect(new URL(page.url()).pathname).toBe('/dashboard/artifacts');
    expect((await api(s.apiUrl, key, 'GET', `/v1/artifacts/${id}`)).status).toBe(410);
  });

  it('revoking an API key asks first', async () => {
    const key = await signUp();
    await page.goto(`${s.apiUrl}/dashboard/keys`);
    await clickAndWait('[data-key] a[href$="/revoke"]');
    expect(await page.textContent('[data-confirm]')).toContain(key.slice(-4));
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).status).toBe(200);
    await clickAndWait('[data-confirm-button]');
    expect(await page.textContent('[role="status"]')).toMatch(/revoked/i);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).status).toBe(401);
  });

  it('revoking a connected app asks first', async () => {
    await signUp();
    // The MCP client's loopback redirect receiver (a redirect is not something the browser's router answers).
    const receiver = http.createServer((_req, res) => res.end('done'));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const callback = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/callback`;
    const client = await registerClient(s.apiUrl, [callback], 'Confirm Agent');
    const { challenge } = pkcePair();
    await page.goto(
      `${s.apiUrl}/oauth/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: callback,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'x',
        resource: `${s.apiUrl}/mcp`,
      })}`,
    );
    await page.check('input[name="tier"][value="read"]');
    await clickAndWait('button[value="approve"]');
    await page.goto(`${s.apiUrl}/dashboard/apps`);
    expect(await page.locator('[data-grant]').count()).toBe(1);
    await clickAndWait('[data-grant] a[href$="/revoke"]');
    expect(await page.textContent('[data-confirm]')).toContain('Confirm Agent');
    await clickAndWait('[data-confirm] a.secondary');
    expect(await page.locator('[data-grant]').count()).toBe(1);
    await clickAndWait('[data-grant] a[href$="/revoke"]');
    await clickAndWait('[data-confirm-button]');
    expect(await page.textContent('[role="status"]')).toMatch(/revoked/i);
    expect(await page.locator('[data-grant]').count()).toBe(0);
    await new Promise((resolve) => receiver.close(resolve));
  });

  it('an image previews inline; other types say there is no preview', async () => {
    const key = await signUp();
    const png = makePng(64, 32);
    const img = await publishContent(s, { filename: 'p.png', content: png, content_type: 'image/png' }, undefined, key);
    await page.goto(`${s.apiUrl}/dashboard/artifacts/${img.artifact.artifact_id}`);
    const width = await page
      .locator('[data-preview="image"]')
      .evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth);
    expect(width).toBe(64);
    const bin = await publishContent(
      s,
      { filename: 'w.bin', content: Buffer.alloc(10, 1), content_type: 'application/octet-stream' },
      undefined,
      key,
    );
    await page.goto(`${s.apiUrl}/dashboard/artifacts/${bin.artifact.artifact_id}`);
    expect(await page.isVisible('[data-preview="none"]')).toBe(true);
  });
});

describe.skipIf(skipBrowser)('dashboard: where logging in leads', () => {
  it('a next= that Chromium would read as another host (TAB, CR, LF, backslash) lands on /dashboard', async () => {
    await signUp();
    // The "other host" is the content origin, a real listener, so that a redirect followed there
    // shows as a wrong URL rather than as a refused connection.
    const other = new URL(s.contentUrl).host;
    for (const next of [`/\t/${other}/x`, `/\r/${other}/x`, `/\n/${other}/x`, `/\t\\${other}/x`, `//${other}/x`]) {
      for (const mode of ['login', 'signup']) {
        await page.goto(`${s.apiUrl}/${mode}?next=${encodeURIComponent(next)}`);
        expect(page.url(), JSON.stringify(next)).toBe(`${s.apiUrl}/dashboard`);
      }
    }
    await page.goto(`${s.apiUrl}/login?next=${encodeURIComponent('/dashboard/keys')}`);
    expect(page.url()).toBe(`${s.apiUrl}/dashboard/keys`);
  });
});
