import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, okJson } from '../helpers/cli.js';
import { ISO_MS } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/** publish, unpublish, sessions and seal of the real `cairn` binary, human and --json. */

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;

const cairn = (args: string[]) => ws.run(args, { CAIRN_API_KEY: server.apiKey });
const push = async (name: string, content: string, ...extra: string[]) =>
  okJson(await cairn(['push', await ws.file(name, content), '--json', ...extra])).artifact_id as string;
const gated = async (slug: string) =>
  (await api(server.apiUrl, null, 'GET', `/v1/public/pages/${slug}/gate-info`)).status === 200;

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

describe('publish and unpublish', { timeout: 120_000 }, () => {
  it('publish prints the URL (human) or the API body (--json); unpublish by id or slug', async () => {
    const id = await push('pub/one.md', '# One\n');
    const human = expectOk(await cairn(['publish', id, '--title', 'One']));
    const url = human.stdout.trim();
    expect(url).toMatch(new RegExp(`^${server.viewerUrl}/a/pg_[A-Za-z0-9]{16}$`));
    expect(human.stderr).toMatch(/^page pg_\w+: unlisted, open$/m);
    const slug = url.split('/').pop()!;

    const body = okJson(await cairn(['publish', id, '--visibility', 'public', '--json']));
    expect(body).toEqual({ page_id: slug, public_url: url, visibility: 'public', access: 'none' });

    const down = expectOk(await cairn(['unpublish', slug]));
    expect(down.stdout.trim()).toBe(`Unpublished page ${slug}.`);
    expect((await api(server.apiUrl, server.apiKey, 'GET', `/v1/artifacts/${id}`)).json.page).toBeNull();
    expectOk(await cairn(['publish', id]));
    expect(okJson(await cairn(['unpublish', id, '--json']))).toEqual({ page_id: slug, unpublished: true });
  });

  it('publishing again keeps the current visibility unless --visibility says otherwise', async () => {
    const id = await push('pub/vis.md', '# Vis\n');
    expect(okJson(await cairn(['publish', id, '--visibility', 'public', '--json'])).visibility).toBe('public');
    expect(okJson(await cairn(['publish', id, '--title', 'Renamed', '--json'])).visibility).toBe('public');
    expect(okJson(await cairn(['publish', id, '--visibility', 'unlisted', '--json'])).visibility).toBe('unlisted');
    expect(okJson(await cairn(['publish', id, '--json'])).visibility).toBe('unlisted');
  });

  it('a password gate is never dropped by accident: --password keeps it, --no-password opens it', async () => {
    const id = await push('pub/secret.md', '# Secret\n');
    const page = okJson(await cairn(['publish', id, '--password', 'pw-1', '--json']));
    expect(page.access).toBe('password');
    expect(await gated(page.page_id)).toBe(true);

    const refused = await cairn(['publish', id, '--title', 'New title']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/password-protected .*pass --password to keep a gate, or --no-password/);
    expect(refused.stdout).toBe('');
    expect(await gated(page.page_id)).toBe(true);

    const kept = expectOk(await cairn(['publish', id, '--title', 'New title', '--password', 'pw-2']));
    expect(kept.stderr).toMatch(/password required/);
    expect(await gated(page.page_id)).toBe(true);

    const opened = okJson(await cairn(['publish', id, '--no-password', '--json']));
    expect(opened).toMatchObject({ page_id: page.page_id, access: 'none' });
    expect(await gated(page.page_id)).toBe(false);
  });

  it('API refusals exit 1 with code and message; a bad --visibility exits 2', async () => {
    const missing = await cairn(['publish', 'art_AAAAAAAAAAAAAAAA']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: artifact_not_found: /);
    const html = await push('pub/page.html', '<p>hi</p>');
    const refused = await cairn(['publish', html, '--password', 'pw']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: invalid_request: /);
    const bad = await cairn(['publish', html, '--visibility', 'secret']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Visibility must be 'unlisted' or 'public'/);
    const nothing = await cairn(['unpublish', 'pg_AAAAAAAAAAAAAAAA']);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toMatch(/^error: artifact_not_found: /);
  });
});

describe('sessions and seal', { timeout: 120_000 }, () => {
  beforeAll(async () => {
    await push('s/a1.txt', 'a1', '--session', 'sess-a');
    await push('s/a2.txt', 'a2', '--session', 'sess-a');
    await push('s/b1.txt', 'b1', '--session', 'sess-b');
  });

  it('sessions prints a table (human) and the API body (--json); --all walks every page', async () => {
    const human = expectOk(await cairn(['sessions']));
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SESSION\s+ARTIFACTS\s+SEALED\s+FIRST\s+LAST$/);
    expect(lines.find((l) => l.startsWith('sess-a'))).toMatch(/^sess-a\s+2\s+no\s+just now\s+just now$/);

    const body = okJson(await cairn(['sessions', '--json']));
    expect(body).toEqual((await api(server.apiUrl, server.apiKey, 'GET', '/v1/sessions')).json);

    const first = expectOk(await cairn(['sessions', '--limit', '1']));
    expect(first.stdout.trim().split('\n')).toHaveLength(2);
    expect(first.stderr).toMatch(/More sessions: repeat with --cursor \S+/);

    const all = okJson(await cairn(['sessions', '--limit', '1', '--all', '--json']));
    expect(Object.keys(all)).toEqual(['sessions', 'next_cursor', 'has_more']);
    expect(all).toMatchObject({ next_cursor: null, has_more: false });
    expect(all.sessions.map((x: { session_id: string }) => x.session_id)).toEqual(
      body.sessions.map((x: { session_id: string }) => x.session_id),
    );
  });

  it('seal (human and --json) is idempotent; sealed sessions refuse pushes; unknown ones exit 1', async () => {
    const human = expectOk(await cairn(['seal', 'sess-b']));
    expect(human.stdout.trim()).toMatch(/^Sealed session sess-b \(1 artifact\) at \S+\.$/);
    const body = okJson(await cairn(['seal', 'sess-b', '--json']));
    expect(body).toEqual({
      session_id: 'sess-b',
      status: 'sealed',
      sealed_at: expect.stringMatching(ISO_MS),
      artifact_count: 1,
    });
    expect(human.stdout).toContain(body.sealed_at);

    const later = await cairn(['push', await ws.file('s/late.txt', 'late'), '--session', 'sess-b']);
    expect(later.code).toBe(1);
    expect(later.stderr).toMatch(/^error: session_sealed: /);
    const listed = okJson(await cairn(['sessions', '--json']));
    expect(listed.sessions.find((x: { session_id: string }) => x.session_id === 'sess-b')).toMatchObject({
      is_sealed: true,
    });
    expect(expectOk(await cairn(['sessions'])).stdout).toMatch(/^sess-b\s+1\s+yes/m);

    const unknown = await cairn(['seal', 'never-used']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: session_not_found: /);
  });
});
