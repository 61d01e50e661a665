import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MARKDOWN_RENDER_MAX_BYTES } from '../../src/http/render/page-kind.js';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError, withoutRequestId } from '../helpers/e2e.js';
import { publishContent, unlockToken } from '../helpers/pages.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * A page that stops being live (expired, unpublished, deleted, taken down) disappears from every
 * public door at once, with the same 404 as a slug that never existed; and the size limit of the
 * Markdown renderer.
 */

const clock = new ManualClock(Date.UTC(2026, 8, 14, 10));
let s: TestServer;
let unknown: { viewer: string; content: string; gateInfo: string };

beforeAll(async () => {
  s = await startTestServer({ clock });
  const never = 'pg_AAAAAAAAAAAAAAAA';
  unknown = {
    viewer: await (await fetch(`${s.viewerUrl}/a/${never}`)).text(),
    content: await (await fetch(`${s.contentUrl}/c/${never}`)).text(),
    gateInfo: (await api(s.apiUrl, null, 'GET', `/v1/public/pages/${never}/gate-info`)).text,
  };
});
afterAll(async () => {
  await s?.close();
});
// Unlock attempts are capped per minute: each test starts in a fresh window.
beforeEach(() => clock.advance(3_600_000));

const gate = { visibility: 'unlisted', access: 'password', password: 'pw' };

/** An open and a gated page (with a token taken while it was live). */
async function pages(upload: Record<string, unknown> = {}) {
  const open = await publishContent(s, { filename: 'o.md', content: '# open', ...upload });
  const gated = await publishContent(s, { filename: 'g.md', content: '# gated', ...upload }, gate);
  const token = await unlockToken(s, gated.slug, 'pw');
  expect((await fetch(`${s.contentUrl}/c/${open.slug}`)).status).toBe(200);
  expect((await fetch(`${s.contentUrl}/c/${gated.slug}?token=${token}`)).status).toBe(200);
  return { open, gated, token };
}

/** Every public door of the page answers exactly like a slug that never existed. */
async function expectGone(slug: string, token?: string): Promise<void> {
  const viewer = await fetch(`${s.viewerUrl}/a/${slug}`);
  expect(viewer.status, `viewer ${slug}`).toBe(404);
  expect(await viewer.text()).toBe(unknown.viewer);
  for (const url of [`${s.contentUrl}/c/${slug}`, `${s.contentUrl}/c/${slug}?download=1`]) {
    const r = await fetch(token ? `${url}${url.includes('?') ? '&' : '?'}token=${token}` : url);
    expect(r.status, url).toBe(404);
    expect(await r.text(), url).toBe(unknown.content);
  }
  const info = await api(s.apiUrl, null, 'GET', `/v1/public/pages/${slug}/gate-info`);
  expectError(info, 404, 'artifact_not_found');
  // Identical but for the request id every response carries.
  expect(withoutRequestId(info.text)).toEqual(withoutRequestId(unknown.gateInfo));
  expectError(
    await api(s.apiUrl, null, 'POST', `/v1/public/pages/${slug}/unlock`, { password: 'pw' }),
    404,
    'artifact_not_found',
  );
  const unlockForm = await fetch(`${s.viewerUrl}/a/${slug}/unlock`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'password=pw',
  });
  expect(unlockForm.status).toBe(404);
  expect(await unlockForm.text()).toBe(unknown.viewer);
}

describe('pages that are no longer live', () => {
  it('expired (by the clock, before any sweep): 404 everywhere, a still-unexpired token included', async () => {
    const { open, gated } = await pages({ ttl: '1h' });
    // A token taken 100 s before the artifact expires is still within its 300 s afterwards.
    clock.advance(3_600_000 - 100_000);
    const token = await unlockToken(s, gated.slug, 'pw');
    clock.advance(150_000);
    await expectGone(open.slug);
    await expectGone(gated.slug, token);
    // After the sweeper has moved the rows to expired, the same.
    expect((await s.core.sweeper.runOnce()).expired).toBeGreaterThanOrEqual(2);
    await expectGone(open.slug);
    await expectGone(gated.slug, token);
  });

  it('unpublished: 404 at /c/ as well as /a/, within the token’s lifetime', async () => {
    const { open, gated, token } = await pages();
    for (const { slug } of [open, gated]) {
      expect((await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${slug}/publish`)).status).toBe(200);
    }
    await expectGone(open.slug);
    await expectGone(gated.slug, token);
  });

  it('soft-deleted: 404 at /c/ as well as /a/, within the token’s lifetime', async () => {
    const { open, gated, token } = await pages();
    for (const { artifact } of [open, gated]) {
      expect((await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${artifact.artifact_id}`)).status).toBe(200);
    }
    await expectGone(open.slug);
    await expectGone(gated.slug, token);
  });

  it('taken down by an operator: 404 at /c/ as well as /a/', async () => {
    const { open, gated, token } = await pages();
    await s.core.pages.takeDown(open.slug);
    await s.core.pages.takeDown(gated.slug);
    await expectGone(open.slug);
    await expectGone(gated.slug, token);
  });
});

describe('Markdown size limit', () => {
  it('renders Markdown up to 2 MiB; beyond that the page is a download card on both origins', async () => {
    const line = '# big\n\nSome *text* here.\n';
    const fill = (size: number) => line.repeat(Math.ceil(size / line.length)).slice(0, size);
    const atLimit = await publishContent(s, { filename: 'at.md', content: fill(MARKDOWN_RENDER_MAX_BYTES) });
    const over = await publishContent(s, { filename: 'over.md', content: fill(MARKDOWN_RENDER_MAX_BYTES + 1) });
    expect(MARKDOWN_RENDER_MAX_BYTES).toBe(2 * 1024 * 1024);

    const atShell = await (await fetch(`${s.viewerUrl}/a/${atLimit.slug}`)).text();
    expect(atShell).toContain('markdown-frame');
    const atDoc = await fetch(`${s.contentUrl}/c/${atLimit.slug}`, { method: 'HEAD' });
    expect(atDoc.headers.get('content-type')).toBe('text/html; charset=utf-8');

    const overShell = await (await fetch(`${s.viewerUrl}/a/${over.slug}`)).text();
    expect(overShell).toContain('download-card');
    expect(overShell).not.toContain('<iframe');
    const overBytes = await fetch(`${s.contentUrl}/c/${over.slug}`);
    expect(overBytes.status).toBe(200);
    expect(overBytes.headers.get('content-type')).toBe('text/markdown');
    expect(overBytes.headers.get('content-disposition')).toMatch(/^attachment; filename="over.md"/);
    expect((await overBytes.arrayBuffer()).byteLength).toBe(MARKDOWN_RENDER_MAX_BYTES + 1);
  });
});
