import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { keepLocal, launchChromium, screenshot, skipBrowser } from '../helpers/browser.js';
import { publishContent } from '../helpers/pages.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The dashboard as a person uses it, in real Chromium: what a click leaves of a page's settings,
 * confirmations, share links, and how the pages fit a phone.
 */

let s: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  if (skipBrowser) return;
  s = await startTestServer();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});
beforeEach(async () => {
  if (skipBrowser) return;
  await context?.close();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  await keepLocal(page);
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
      return s.core.deps.store.getPageForArtifact(tenant.id, artifact.artifact_id);
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
    expect(await s.core.deps.store.getPageForArtifact(tenant.id, artifact.artifact_id)).toMatchObject({
      access: 'none',
      title: 'Hello page',
      visibility: 'unlisted',
    });
    expect((await fetch(`${s.viewerUrl}/a/${slug}`)).status).toBe(200);
  });
});
