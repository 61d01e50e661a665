import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantNameFor } from '../../src/core/accounts/users.js';
import type { WebhookRow } from '../../src/ports/webhook-store.js';
import { eventually, put } from '../helpers/e2e.js';
import { hiddenField, WebUser } from '../helpers/hosted.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { type Receiver, startReceiver } from '../helpers/webhook-receiver.js';

/**
 * The dashboard's Webhooks section over plain HTTP: list, create (secret shown once), the
 * delivery log a page at a time, rotate and delete behind confirmation pages; another tenant's
 * webhook is a 404 on every page and form; every form needs its CSRF token; what the receiver's
 * URL says is shown as text.
 */

let s: TestServer;
let rx: Receiver;
let user: WebUser;
let other: WebUser;
let key: string;
let people = 0;

async function signUp(): Promise<{ user: WebUser; key: string }> {
  const u = new WebUser(s.apiUrl);
  const email = `hooks-${++people}-${Date.now()}@example.com`;
  await u.signUp(email);
  // Pro, for room for the webhooks of every test (Free has 2).
  const tenant = await s.core.tenants.setPlan(await s.core.tenants.byName(tenantNameFor(email)), 'pro');
  return { user: u, key: await s.core.tenants.createKey(tenant) };
}

/** Creates a webhook through the dashboard's form; returns the page and the new webhook's id and secret. */
async function createHook(u: WebUser, fields: Record<string, string>) {
  const page = await u.submit('/dashboard/webhooks', '/dashboard/webhooks', fields);
  expect(page.status, page.text).toBe(201);
  const secret = /<p class="secret" data-secret>(whsec_[^<]+)<\/p>/.exec(page.text)?.[1] ?? '';
  const ids = [...page.text.matchAll(/data-webhook="(wh_[A-Za-z0-9]{16})"/g)].map((m) => m[1] as string);
  return { page, secret, id: ids.at(-1) as string };
}

/** A webhook row written past the API's checks (a raw URL, a disabled state), for what only a store can make. */
async function storeHook(over: Partial<WebhookRow> & { id: string; url: string }) {
  const tenant = (await s.core.tenants.authenticate(key)).tenant;
  const now = Date.now();
  const row = await s.core.deps.webhookStore.createWebhook(
    {
      tenantId: tenant.id,
      types: null,
      sessionId: null,
      secret: 'whsec_AAAA',
      previousSecret: null,
      previousUntil: null,
      status: 'active',
      createdAt: now,
      attempts: 0,
      failingSince: null,
      nextAttemptAt: now + 86_400_000,
      disabledAt: null,
      leaseOwner: null,
      leaseUntil: null,
      ...over,
    },
    20,
  );
  expect(row).not.toBeNull();
  return row!;
}

const csrfOf = async (u: WebUser) => hiddenField((await u.request('GET', '/dashboard/webhooks')).text, 'csrf');

beforeAll(async () => {
  s = await startTestServer({ env: { CAIRN_WEBHOOK_ALLOW_PRIVATE_ADDRESSES: '1' } });
  rx = await startReceiver();
  ({ user, key } = await signUp());
  ({ user: other } = await signUp());
});
afterAll(async () => {
  await rx?.close();
  await s?.close();
});

describe('dashboard: webhooks', () => {
  it('creates one showing its secret once, logs its deliveries a page at a time, rotates and deletes it', async () => {
    const empty = await user.request('GET', '/dashboard/webhooks');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('href="/dashboard/webhooks" aria-current="page"');
    expect(empty.text).toContain('No webhooks yet.');

    const { page, secret, id } = await createHook(user, {
      url: `${rx.url}?dash`,
      'type.artifact.created': 'on',
      'type.session.sealed': 'on',
      session_id: 'run-42',
    });
    expect(secret).toMatch(/^whsec_/);
    expect(page.text).toContain(`${rx.url}?dash`);
    expect(page.text).toContain('artifact.created, session.sealed');
    expect(page.text).toContain('data-status="active"');
    expect(page.text).toContain('run-42');
    const listed = await user.request('GET', '/dashboard/webhooks');
    expect(listed.text).toContain(`data-webhook="${id}"`);
    expect(listed.text).not.toContain(secret);
    expect((await api(s.apiUrl, key, 'GET', `/v1/webhooks/${id}`)).json).toMatchObject({
      url: `${rx.url}?dash`,
      types: ['artifact.created', 'session.sealed'],
      session_id: 'run-42',
    });

    // Two deliveries, the second refused by the receiver (it keeps refusing while the log is read,
    // so retries only add failed attempts): the log shows both, newest first.
    const first = await put(s.apiUrl, key, 'one', { session_id: 'run-42' });
    await eventually(() => rx.received.length >= 1, 5000, 'the first delivery');
    expect(rx.verified(secret).map((e) => (e as { data: unknown }).data)).toEqual([first]);
    rx.answer = 503;
    await put(s.apiUrl, key, 'other session', { session_id: 'run-7' });
    await put(s.apiUrl, key, 'two', { session_id: 'run-42' });
    const logPage = async (query = '') => user.request('GET', `/dashboard/webhooks/${id}${query}`);
    await eventually(async () => (await logPage()).text.includes('data-result="failed"'), 5000, 'the log');
    const log = await logPage();
    expect(log.status).toBe(200);
    expect(log.text).toMatch(
      /<td class="mono">evt_0000000000000001<\/td><td class="mono">artifact.created<\/td><td>1<\/td>/,
    );
    expect(log.text).toMatch(
      /<td class="mono">evt_0000000000000003<\/td><td class="mono">artifact.created<\/td><td>1<\/td>/,
    );
    expect(log.text).toContain('data-result="delivered"');
    expect(log.text).toMatch(/<td class="mono" data-response>503<\/td>/);
    expect(log.text).toMatch(/<td class="mono" data-response>200<\/td>/);
    expect(log.text.indexOf('data-result="failed"')).toBeLessThan(log.text.indexOf('data-result="delivered"'));

    // A page at a time: each page one attempt, the newest first, the first delivery last.
    let next = `/dashboard/webhooks/${id}?limit=1`;
    const rows: string[] = [];
    for (let pages = 0; next !== '' && pages < 20; pages++) {
      const one = await user.request('GET', next);
      expect(one.text.match(/data-delivery=/g)).toHaveLength(1);
      rows.push(/data-delivery="(whd_[A-Za-z0-9]+)"[\s\S]*?data-result="(\w+)"/.exec(one.text)!.slice(1).join(' '));
      next = /href="([^"]+)" data-next>Next page/.exec(one.text)?.[1]?.replaceAll('&amp;', '&') ?? '';
      if (next) expect(next).toMatch(new RegExp(`^/dashboard/webhooks/${id}\\?limit=1&cursor=`));
    }
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(new Set(rows).size).toBe(rows.length);
    expect(rows[0]).toMatch(/ failed$/);
    expect(rows.at(-1)).toMatch(/ delivered$/);
    expect((await logPage('?cursor=nonsense')).status).toBe(400);
    rx.answer = 200;

    // Rotating: a confirmation page, then the new secret once.
    const confirm = await user.request('GET', `/dashboard/webhooks/${id}/rotate`);
    expect(confirm.status).toBe(200);
    expect(confirm.text).toContain(`action="/dashboard/webhooks/${id}/rotate"`);
    const rotated = await user.request('POST', `/dashboard/webhooks/${id}/rotate`, {
      csrf: hiddenField(confirm.text, 'csrf'),
    });
    expect(rotated.status).toBe(200);
    const fresh = /<p class="secret" data-secret>(whsec_[^<]+)<\/p>/.exec(rotated.text)?.[1] ?? '';
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    expect((await logPage()).text).not.toContain(fresh);
    // The endpoint signs with the new secret now, and with the old beside it for 24 hours.
    const stored = await s.core.deps.webhookStore.getWebhook((await s.core.tenants.authenticate(key)).tenant.id, id);
    expect(stored).toMatchObject({ secret: fresh, previousSecret: secret });

    // Deleting: a confirmation page, then gone from the list and from the API.
    const del = await user.request('GET', `/dashboard/webhooks/${id}/delete`);
    expect(del.status).toBe(200);
    expect(del.text).toContain('data-confirm-button');
    const gone = await user.request('POST', `/dashboard/webhooks/${id}/delete`, {
      csrf: hiddenField(del.text, 'csrf'),
    });
    expect(gone.status).toBe(303);
    expect(gone.location).toBe('/dashboard/webhooks?done=deleted');
    const after = await user.request('GET', gone.location!);
    expect(after.text).toContain('Webhook deleted');
    expect(after.text).not.toContain(`data-webhook="${id}"`);
    expect((await api(s.apiUrl, key, 'GET', `/v1/webhooks/${id}`)).status).toBe(404);
  });

  it('shows the error of a refused URL, and needs a signed-in user', async () => {
    const bad = await user.submit('/dashboard/webhooks', '/dashboard/webhooks', { url: 'ftp://example.com/x' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('role="alert"');
    expect(bad.text).toContain('url must be http or https');
    const anonymous = new WebUser(s.apiUrl);
    for (const path of ['/dashboard/webhooks', '/dashboard/webhooks/wh_AAAAAAAAAAAAAAAA']) {
      const r = await anonymous.request('GET', path);
      expect(r.status, path).toBe(303);
      expect(r.location).toMatch(/^\/login/);
    }
  });

  it('another tenant’s webhook is a 404 on every page and form, and stays as it was', async () => {
    const { id, secret } = await createHook(user, { url: `${rx.url}?isolated` });
    const theirs = await csrfOf(other);
    for (const path of [
      `/dashboard/webhooks/${id}`,
      `/dashboard/webhooks/${id}/rotate`,
      `/dashboard/webhooks/${id}/delete`,
    ]) {
      const r = await other.request('GET', path);
      expect(r.status, path).toBe(404);
      expect(r.text, path).not.toContain(`${rx.url}?isolated`);
    }
    for (const verb of ['rotate', 'enable', 'delete']) {
      const r = await other.request('POST', `/dashboard/webhooks/${id}/${verb}`, { csrf: theirs });
      expect(r.status, verb).toBe(404);
      expect(r.text, verb).not.toContain('whsec_');
    }
    expect((await other.request('GET', '/dashboard/webhooks')).text).not.toContain(id);
    const row = await s.core.deps.webhookStore.getWebhook((await s.core.tenants.authenticate(key)).tenant.id, id);
    expect(row?.secret).toBe(secret);
    expect(row?.previousSecret).toBeNull();
  });

  it('refuses every webhook form without its CSRF token, or with another session’s, and changes nothing', async () => {
    const { id, secret } = await createHook(user, { url: `${rx.url}?csrf` });
    const theirs = await csrfOf(other);
    const before = (await api(s.apiUrl, key, 'GET', '/v1/webhooks')).json.webhooks.length;
    for (const action of [
      '/dashboard/webhooks',
      `/dashboard/webhooks/${id}/rotate`,
      `/dashboard/webhooks/${id}/enable`,
      `/dashboard/webhooks/${id}/delete`,
    ]) {
      const forms: Record<string, string>[] = [
        { url: `${rx.url}?forged` },
        { url: `${rx.url}?forged`, csrf: 'forged' },
        { url: `${rx.url}?forged`, csrf: theirs },
      ];
      for (const form of forms) {
        const r = await user.request('POST', action, form);
        expect(r.status, `${action} ${JSON.stringify(form)}`).toBe(403);
        expect(r.text).toContain('Form expired');
      }
    }
    expect((await api(s.apiUrl, key, 'GET', '/v1/webhooks')).json.webhooks.length).toBe(before);
    const row = await s.core.deps.webhookStore.getWebhook((await s.core.tenants.authenticate(key)).tenant.id, id);
    expect(row?.secret).toBe(secret);
    await api(s.apiUrl, key, 'DELETE', `/v1/webhooks/${id}`);
  });

  it('enables a disabled webhook from its page, with its CSRF token, for its own tenant only', async () => {
    const hook = await storeHook({
      id: 'wh_DISABLEDDISABLE1',
      url: `${rx.url}?disabled`,
      status: 'disabled',
      disabledAt: Date.now(),
      failingSince: Date.now() - 86_400_000,
    });
    const state = async () => (await api(s.apiUrl, key, 'GET', `/v1/webhooks/${hook.id}`)).json.status;
    const pagePath = `/dashboard/webhooks/${hook.id}`;
    const shown = await user.request('GET', pagePath);
    expect(shown.text).toContain('data-field="status">disabled<');
    expect(shown.text).toContain('data-disabled');
    expect(shown.text).toContain(`action="${pagePath}/enable"`);
    expect((await other.request('POST', `${pagePath}/enable`, { csrf: await csrfOf(other) })).status).toBe(404);
    expect((await user.request('POST', `${pagePath}/enable`, {})).status).toBe(403);
    expect(await state()).toBe('disabled');
    const enabled = await user.submit(pagePath, `${pagePath}/enable`, {});
    expect(enabled.status).toBe(200);
    expect(enabled.text).toContain('Enabled: delivery resumes');
    expect(enabled.text).not.toContain('data-disabled');
    expect(await state()).toBe('active');
    await api(s.apiUrl, key, 'DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('shows what a URL says as text, never as markup', async () => {
    // Through the form: the URL parser percent-encodes < and >, and ' & stay, escaped in the page.
    const { page, id } = await createHook(user, { url: `${rx.url}/<script>alert(1)</script>/it's&more` });
    expect(page.text).not.toContain('<script>alert(1)');
    expect(page.text).toContain('/%3Cscript%3Ealert(1)%3C/script%3E/it&#39;s&amp;more');
    await api(s.apiUrl, key, 'DELETE', `/v1/webhooks/${id}`);
    // And a stored URL as raw as it gets (written past the API's checks): escaped on every page.
    const raw = 'https://example.com/<script>alert(1)</script>"onmouseover="x';
    const row = await storeHook({ id: 'wh_RAWRAWRAWRAWRAW1', url: raw });
    for (const path of [
      '/dashboard/webhooks',
      `/dashboard/webhooks/${row.id}`,
      `/dashboard/webhooks/${row.id}/delete`,
    ]) {
      const r = await user.request('GET', path);
      expect(r.status, path).toBe(200);
      expect(r.text, path).not.toContain('<script>alert(1)');
      expect(r.text, path).not.toContain('"onmouseover="');
      expect(r.text, path).toContain(
        'https://example.com/&lt;script&gt;alert(1)&lt;/script&gt;&quot;onmouseover=&quot;x',
      );
    }
    await api(s.apiUrl, key, 'DELETE', `/v1/webhooks/${row.id}`);
  });
});
