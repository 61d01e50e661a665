import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, deadLoopbackUrl, expectOk, okJson } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * One rule for ids and repeats across the client commands (docs/cli.md, "Exit codes"): an id of
 * the wrong shape is a usage error (2) found before any request; a well-formed id that names
 * nothing is 1; repeating an action whose result already holds is 0 and says so.
 */

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
/** A loopback URL with nothing listening: a command that sent a request there would fail with 1. */
let deadUrl: string;

const cairn = (args: string[], env: Record<string, string> = {}) =>
  ws.run(args, { CAIRN_API_KEY: server.apiKey, ...env });

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
  deadUrl = await deadLoopbackUrl();
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

describe('exit codes, one rule', { timeout: 120_000 }, () => {
  it('an id of the wrong shape is a usage error (2), before any request, in every command', async () => {
    const cases: [string[], RegExp][] = [
      [['get', 'art_nope'], /An artifact id is art_ and 16 letters or digits/],
      [['get', 'report.md'], /An artifact id is art_/],
      [['rm', 'art_nope'], /An artifact id is art_/],
      [['download', 'art_nope'], /An artifact id is art_/],
      [['download-url', 'art_AAAAAAAAAAAAAAAA', 'nope'], /An artifact id is art_/],
      [['link', 'pg_AAAAAAAAAAAAAAAA'], /An artifact id is art_/],
      [['links', 'art_nope'], /An artifact id is art_/],
      [['publish', 'art_nope'], /An artifact id is art_/],
      [['unlink', 'lnk_short'], /A link id is lnk_ and 20 letters or digits/],
      [['unpublish', 'nope'], /artifact id \(art_ and 16 letters or digits\) or a page id/],
      [['seal', 'run 42'], /A session id is 1-128 letters/],
    ];
    for (const [args, message] of cases) {
      const r = await cairn(args, { CAIRN_API_URL: deadUrl });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toContain('/v1/');
      const j = await cairn([...args, '--json'], { CAIRN_API_URL: deadUrl });
      expect(j.code).toBe(2);
      expect(JSON.parse(j.stderr).error).toMatchObject({ code: 'invalid_request', status: 400 });
    }
  });

  it('a well-formed id that names nothing is 1', async () => {
    for (const args of [
      ['get', 'art_0000000000000000'],
      ['rm', 'art_0000000000000000'],
      ['link', 'art_0000000000000000'],
      ['unlink', 'lnk_00000000000000000000'],
      ['seal', 'never-used-session'],
    ]) {
      const r = await cairn(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(/^error: (artifact|session)_not_found: /);
    }
  });

  it('repeating rm, unlink, unpublish or seal succeeds (0) and says so', async () => {
    const file = await ws.file('repeat.md', '# again');
    const art = okJson(await cairn(['push', file, '--session', 'repeat-run', '--json']));
    const id = art.artifact_id as string;
    const link = okJson(await cairn(['link', id, '--json']));
    for (let i = 0; i < 2; i++) expectOk(await cairn(['unlink', link.link_id as string]));
    okJson(await cairn(['publish', id, '--json']));
    for (let i = 0; i < 2; i++) expectOk(await cairn(['unpublish', id]));
    const sealed = okJson(await cairn(['seal', 'repeat-run', '--json']));
    const again = okJson(await cairn(['seal', 'repeat-run', '--json']));
    expect(again.sealed_at).toBe(sealed.sealed_at);
    expect(expectOk(await cairn(['rm', id])).stdout).toContain(`Deleted ${id}.`);
    expect(expectOk(await cairn(['rm', id])).stdout).toContain(`${id} was already deleted.`);
  });
});
