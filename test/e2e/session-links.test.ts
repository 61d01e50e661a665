import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { DAY_MS, expectError, ISO_MS, LINK_ID, put, type Rec } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A link to a whole sealed session (POST /v1/sessions/{id}/links): its page on the viewer origin
 * lists the files with their sizes and "download all"; the archive comes from the download
 * origin; the list, revoke, lifetime and the plan's cap are those of artifact links.
 */
const run = promisify(execFile);
const CHECK = path.resolve(import.meta.dirname, '../helpers/archive_check.py');

let s: TestServer;
const clock = new ManualClock(Date.UTC(2026, 10, 1));
beforeAll(async () => {
  s = await startTestServer({ clock });
});
afterAll(async () => {
  await s?.close();
});

const createLink = (key: string, session: string, body?: Rec) =>
  api(s.apiUrl, key, 'POST', `/v1/sessions/${session}/links`, body);

/** A sealed session of three files (one named to break HTML), in a new tenant; returns its key. */
async function sealedSession(name: string, plan: 'free' | 'pro' = 'pro'): Promise<string> {
  const key = await s.createTenant(name, plan);
  await put(s.apiUrl, key, '# Report', { filename: 'report.md', session_id: 'run-42' });
  clock.advance(1000);
  await put(s.apiUrl, key, 'a,b\n1,2\n', { filename: '<img src=x onerror=alert(1)>&amp.csv', session_id: 'run-42' });
  clock.advance(1000);
  await put(s.apiUrl, key, 'x'.repeat(2500), { filename: 'data.txt', session_id: 'run-42' });
  expect((await api(s.apiUrl, key, 'POST', '/v1/sessions/run-42/seal')).status).toBe(200);
  return key;
}

describe('POST /v1/sessions/{id}/links', () => {
  it('links a sealed session: its viewer page lists the files, and the archive downloads from the link', async () => {
    const key = await sealedSession('slink-main');
    const r = await createLink(key, 'run-42', { expires_in: 3 * 86_400 });
    expect(r.status, r.text).toBe(201);
    const link = r.json;
    expect(link).toEqual({
      link_id: expect.stringMatching(LINK_ID),
      url: `${s.viewerUrl}/s/${link.link_id}`,
      archive_url: `${s.contentUrl}/${link.link_id}`,
      session_id: 'run-42',
      expires_at: new Date(clock.now() + 3 * DAY_MS).toISOString(),
      created_at: expect.stringMatching(ISO_MS),
    });

    // The page: every file with its size, escaped; download-all points at the archive; no script.
    const page = await fetch(link.url);
    expect(page.status).toBe(200);
    const body = await page.text();
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    expect(body).toContain('3 files');
    expect(body).toContain('<td class="name">report.md</td><td class="size">8 B</td>');
    expect(body).toContain('<td class="name">data.txt</td><td class="size">2.5 KB</td>');
    expect(body).toContain('<td class="name">_img src=x onerror=alert(1)_&amp;amp.csv</td>');
    expect(body).not.toContain('<img src=x');
    expect(body).toContain(`href="${link.archive_url}"`);
    expect(body).toContain(`href="${link.archive_url}?format=tar.gz"`);

    // The archive, without a key, from the download origin: checked by Python's zipfile and tarfile.
    for (const format of ['zip', 'tar.gz']) {
      const res = await fetch(format === 'zip' ? link.archive_url : `${link.archive_url}?format=tar.gz`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toContain(`filename="run-42.${format}"`);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const dir = await mkdtemp(path.join(tmpdir(), 'cairn-slink-'));
      try {
        const file = path.join(dir, 'a');
        await writeFile(file, Buffer.from(await res.arrayBuffer()));
        const out = JSON.parse((await run('python3', [CHECK, file, format, path.join(dir, 'x')])).stdout);
        expect(out.problems).toEqual([]);
        expect(out.names).toEqual(['manifest.json', 'report.md', '_img src=x onerror=alert(1)_&amp.csv', 'data.txt']);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    expect((await fetch(`${link.archive_url}?format=rar`)).status).toBe(400);
    const head = await fetch(link.archive_url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/zip');

    // Listed with the session's links; another tenant sees neither the session nor its links.
    const listed = await api(s.apiUrl, key, 'GET', '/v1/sessions/run-42/links');
    expect(listed.json).toEqual({
      links: [
        {
          link_id: link.link_id,
          url: link.url,
          archive_url: link.archive_url,
          expires_at: link.expires_at,
          created_at: link.created_at,
        },
      ],
      next_cursor: null,
      has_more: false,
    });
    const stranger = await s.createTenant('slink-stranger', 'pro');
    expectError(await api(s.apiUrl, stranger, 'GET', '/v1/sessions/run-42/links'), 404, 'session_not_found');
    expectError(await createLink(stranger, 'run-42'), 404, 'session_not_found');
    expectError(await api(s.apiUrl, stranger, 'DELETE', `/v1/links/${link.link_id}`), 404, 'artifact_not_found');
    expect((await fetch(link.archive_url)).status).toBe(200);

    // A deleted artifact drops out of the page and the archive.
    const [first] = (await api(s.apiUrl, key, 'GET', '/v1/artifacts?session_id=run-42')).json.artifacts;
    expect((await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${first.artifact_id}`)).status).toBe(200);
    expect(await (await fetch(link.url)).text()).toContain('2 files');

    // Revoked: the page and the archive are gone at once, and the list drops it.
    expect((await api(s.apiUrl, key, 'DELETE', `/v1/links/${link.link_id}`)).json).toEqual({
      link_id: link.link_id,
      revoked: true,
    });
    expect((await fetch(link.url)).status).toBe(404);
    expect((await fetch(link.archive_url)).status).toBe(404);
    expect((await api(s.apiUrl, key, 'GET', '/v1/sessions/run-42/links')).json.links).toEqual([]);
  });

  it('refuses an open session, an unknown one and bad lifetimes; links expire', async () => {
    const key = await s.createTenant('slink-rules', 'pro');
    await put(s.apiUrl, key, 'open', { filename: 'open.txt', session_id: 'still-open' });
    const open = await createLink(key, 'still-open');
    expectError(open, 400, 'invalid_request');
    expect(open.json.error.message).toMatch(/not sealed/);
    expectError(await createLink(key, 'no-such-session'), 404, 'session_not_found');
    expectError(await createLink(key, 'a%20b'), 404, 'session_not_found');
    await api(s.apiUrl, key, 'POST', '/v1/sessions/still-open/seal');
    expectError(await createLink(key, 'still-open', { expires_in: 2_592_001 }), 400, 'invalid_request');
    expectError(await createLink(key, 'still-open', { expires_in: 60, ttl: '1d' }), 400, 'invalid_request');
    const empty = await api(s.apiUrl, key, 'POST', '/v1/sessions/still-open/links', '');
    expect(empty.status, empty.text).toBe(201);
    expect(Date.parse(empty.json.expires_at) - clock.now()).toBe(7 * DAY_MS);
    const short = (await createLink(key, 'still-open', { ttl: '1h' })).json;
    clock.advance(3_600_000);
    expect((await fetch(short.archive_url)).status).toBe(404);
    expect((await fetch(short.url)).status).toBe(404);
    expect((await fetch(empty.json.archive_url)).status).toBe(200);
    // A suspended tenant's links serve nothing.
    const tenant = (await s.core.deps.tenantStore.getTenantByName('slink-rules'))!;
    await s.core.deps.tenantStore.updateTenant(tenant.id, { suspended: true });
    expect((await fetch(empty.json.archive_url)).status).toBe(404);
    expect((await fetch(empty.json.url)).status).toBe(404);
  });

  it('session and artifact links share the plan’s cap of active links', async () => {
    const key = await sealedSession('slink-cap', 'free');
    const a = await put(s.apiUrl, key, 'capped', { filename: 'capped.txt' });
    for (let i = 0; i < 99; i++) {
      expect((await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`)).status).toBe(201);
    }
    const last = await createLink(key, 'run-42');
    expect(last.status, last.text).toBe(201);
    expect((await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.active_links).toBe(100);
    expectError(await createLink(key, 'run-42'), 403, 'quota_exceeded');
    expectError(await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`), 403, 'quota_exceeded');
    // Revoking the session link frees its place for either kind.
    await api(s.apiUrl, key, 'DELETE', `/v1/links/${last.json.link_id}`);
    expect((await api(s.apiUrl, key, 'POST', `/v1/artifacts/${a.artifact_id}/links`)).status).toBe(201);
  });
});
