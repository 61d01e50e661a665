import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/core/access.js';
import { CairnError } from '../../src/core/errors.js';
import { PageService } from '../../src/core/pages.js';
import { Argon2idHasher, type PasswordHasher } from '../../src/core/passwords.js';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError } from '../helpers/e2e.js';
import { publishContent, storeWithType, unlockInViewer, unlockToken } from '../helpers/pages.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/** The password gate over HTTP: content tokens bound to the password, hashing only after the caps. */

const clock = new ManualClock(Date.UTC(2026, 7, 3, 9));
let s: TestServer;
let otherKey: string;

beforeAll(async () => {
  s = await startTestServer({ clock });
  otherKey = await s.createTenant('other-co', 'pro');
});
afterAll(async () => {
  await s?.close();
});
// Unlock attempts are capped per minute: each test starts in a fresh window.
beforeEach(() => clock.advance(3_600_000));

const gate = (password: string) => ({ visibility: 'unlisted', access: 'password', password });
const publish = (id: string, body: unknown, key = s.apiKey) =>
  api(s.apiUrl, key, 'POST', `/v1/artifacts/${id}/publish`, body);
const content = (slug: string, token?: string) =>
  fetch(`${s.contentUrl}/c/${slug}${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`);

describe('content tokens are bound to the password', () => {
  it('a new password, the gate switched off and on, or an unpublish refuses earlier tokens at once', async () => {
    const { artifact, slug } = await publishContent(s, { filename: 'g.md', content: '# gated' }, gate('pw-1'));
    const id = artifact.artifact_id;
    const first = await unlockToken(s, slug, 'pw-1');
    expect((await content(slug, first)).status).toBe(200);

    // The owner changes the password: the old token is refused well within its 300 s.
    expect((await publish(id, gate('pw-2'))).status).toBe(200);
    expect((await content(slug, first)).status).toBe(404);
    expectError(
      await api(s.apiUrl, null, 'POST', `/v1/public/pages/${slug}/unlock`, { password: 'pw-1' }),
      401,
      'unauthorized',
    );
    const second = await unlockToken(s, slug, 'pw-2');
    expect((await content(slug, second)).status).toBe(200);

    // Open, then gated again with the very same password: a new hash, so the token is refused.
    expect((await publish(id, { visibility: 'unlisted' })).status).toBe(200);
    expect((await content(slug)).status).toBe(200);
    expect((await publish(id, gate('pw-2'))).status).toBe(200);
    expect((await content(slug, second)).status).toBe(404);
    const third = await unlockToken(s, slug, 'pw-2');
    expect((await content(slug, third)).status).toBe(200);

    // Unpublished: refused; and re-publishing does not revive it.
    expect((await api(s.apiUrl, s.apiKey, 'DELETE', `/v1/artifacts/${id}/publish`)).status).toBe(200);
    expect((await content(slug, third)).status).toBe(404);
    expect((await publish(id, gate('pw-2'))).status).toBe(200);
    expect((await content(slug, third)).status).toBe(404);
    expect((await content(slug, await unlockToken(s, slug, 'pw-2'))).status).toBe(200);
  });
});

/** The real Argon2id hasher, counting the hashing it is asked to do. */
class CountingHasher implements PasswordHasher {
  calls = 0;
  private readonly real = new Argon2idHasher();
  hash(password: string) {
    this.calls++;
    return this.real.hash(password);
  }
  verify(hash: string, password: string) {
    this.calls++;
    return this.real.verify(hash, password);
  }
  verifyDummy(password: string) {
    this.calls++;
    return this.real.verifyDummy(password);
  }
}

describe('unlock caps come before any hashing', () => {
  const code = async (p: Promise<unknown>) => {
    try {
      await p;
      return 'ok';
    } catch (err) {
      expect(err).toBeInstanceOf(CairnError);
      return (err as CairnError).code;
    }
  };

  it('per slug: the 11th attempt in a minute is refused without hashing, even with the right password', async () => {
    const hasher = new CountingHasher();
    const pages = new PageService(s.core.deps, hasher);
    const { slug } = await publishContent(s, { filename: 'h.md', content: '# h' }, gate('right'));
    for (let i = 0; i < 10; i++) {
      expect(await code(pages.unlock(slug, { password: `guess-${i}` }, `192.0.2.${i}`))).toBe('unauthorized');
    }
    expect(hasher.calls).toBe(10);
    const refused = pages.unlock(slug, { password: 'right' }, '192.0.2.200');
    await expect(refused).rejects.toBeInstanceOf(RateLimitedError);
    expect(hasher.calls).toBe(10);
  });

  it('per IP: the 31st attempt in a minute is refused without hashing, missing pages included', async () => {
    const hasher = new CountingHasher();
    const pages = new PageService(s.core.deps, hasher);
    const ip = '198.51.100.77';
    for (let i = 0; i < 30; i++) {
      // A missing page costs a dummy verify, so its timing matches a wrong password.
      expect(await code(pages.unlock(`pg_${String(i).padStart(16, 'H')}`, { password: 'x' }, ip))).toBe(
        'artifact_not_found',
      );
    }
    expect(hasher.calls).toBe(30);
    expect(await code(pages.unlock('pg_HHHHHHHHHHHHHH99', { password: 'x' }, ip))).toBe('rate_limited');
    expect(hasher.calls).toBe(30);
  });
});

describe('cross-tenant unlock', () => {
  it("one tenant's key or page password never opens another tenant's page", async () => {
    const mine = await publishContent(s, { filename: 'm.md', content: '# mine' }, gate('shared-pw'));
    const theirs = await publishContent(s, { filename: 't.md', content: '# theirs' }, gate('their-pw'), otherKey);
    // The public endpoints ignore any key: sending one changes nothing.
    expectError(
      await api(s.apiUrl, s.apiKey, 'POST', `/v1/public/pages/${theirs.slug}/unlock`, { password: 'shared-pw' }),
      401,
      'unauthorized',
    );
    const token = await unlockToken(s, mine.slug, 'shared-pw');
    expect((await content(theirs.slug, token)).status).toBe(404);
    const viaKey = await api(s.apiUrl, otherKey, 'POST', `/v1/public/pages/${theirs.slug}/unlock`, {
      password: 'their-pw',
    });
    expect(viaKey.status).toBe(200);
    expect((await content(mine.slug, viaKey.json.content_token)).status).toBe(404);
    expect((await content(theirs.slug, viaKey.json.content_token)).status).toBe(200);
  });
});

describe('renderer after unlock: the stored type only', () => {
  it('a gated notes.md stored as text/plain is a text preview, while an open one renders Markdown', async () => {
    const md = '# Heading\n\nbody';
    const gatedId = await storeWithType(s, 'notes.md', 'text/plain', md);
    const openId = await storeWithType(s, 'notes.md', 'text/plain', md);
    const gated = (await publish(gatedId, gate('pw'))).json.page_id;
    const open = (await publish(openId, { visibility: 'unlisted' })).json.page_id;

    // Open: the filename fallback applies; the shell frames the rendered Markdown.
    const openShell = await (await fetch(`${s.viewerUrl}/a/${open}`)).text();
    expect(openShell).toContain('markdown-frame');
    const openDoc = await content(open);
    expect(openDoc.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await openDoc.text()).toContain('<h1>Heading</h1>');

    // Gated, after unlock: text/plain is the text preview; the name does not make it Markdown.
    const shell = await unlockInViewer(s, gated, 'pw');
    expect(shell.status).toBe(200);
    const body = await shell.text();
    expect(body).toContain('preview-frame preview-text');
    expect(body).not.toContain('class="panel frame markdown-frame"');
    const token = await unlockToken(s, gated, 'pw');
    const doc = await (await content(gated, token)).text();
    expect(doc).toContain('<span class="l"># Heading</span>');
    expect(doc).not.toContain('<h1>');
    const bytes = await fetch(`${s.contentUrl}/c/${gated}?download=1&token=${encodeURIComponent(token)}`);
    expect(bytes.status).toBe(200);
    expect(bytes.headers.get('content-type')).toBe('text/plain');
    expect(bytes.headers.get('content-disposition')).toMatch(/^attachment; filename="notes.md"/);
    expect(await bytes.text()).toBe(md);
  });
});
