import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, okJson } from '../helpers/cli.js';
import { ART_ID } from '../helpers/e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * What the CLI takes besides single files (a folder with --recursive, stdin with --name), the
 * link lifetime checked before any request, and --json failures as the API's error envelope.
 * The real `cairn` binary (dist/) against a real server.
 */

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
const key = () => ({ CAIRN_API_KEY: server.apiKey });
const cairn = (args: string[], env: Record<string, string> = key(), input?: string) => ws.run(args, env, input);
/** The one JSON line of a --json failure on stderr, parsed (stdout must be empty). */
const envelope = (r: { stdout: string; stderr: string }) => {
  expect(r.stdout).toBe('');
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '');
};

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});
beforeEach(async () => {
  await ws.newConfig();
});

describe('push: folders and stdin', { timeout: 120_000 }, () => {
  it('a folder needs --recursive; then every file under it is pushed with metadata.path', async () => {
    await ws.file('out/report.md', '# R\n');
    await ws.file('out/img/a.png', 'png');
    await ws.file('out/img/deep/b.txt', 'b');
    await mkdir(path.join(ws.work, 'out', 'empty'), { recursive: true });
    // A link back up must not loop; a link to a file counts.
    await symlink('..', path.join(ws.work, 'out', 'img', 'up'));
    await writeFile(path.join(ws.work, 'elsewhere.txt'), 'linked');
    await symlink(path.join(ws.work, 'elsewhere.txt'), path.join(ws.work, 'out', 'linked.txt'));

    const bare = await cairn(['push', path.join(ws.work, 'out')]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/out is a folder; add --recursive/);

    const r = expectOk(await cairn(['push', 'out', '--recursive', '--session', 'tree', '--json']));
    const records = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.map((x) => x.metadata.path)).toEqual([
      'out/img/a.png',
      'out/img/deep/b.txt',
      'out/linked.txt',
      'out/report.md',
    ]);
    expect(records.map((x) => x.filename)).toEqual(['a.png', 'b.txt', 'linked.txt', 'report.md']);
    for (const x of records) expect(x.session_id).toBe('tree');
    // Re-running replays every one of them.
    const again = expectOk(await cairn(['push', 'out', '-r', '--session', 'tree']));
    expect(again.stdout.match(/\(already pushed\)/g)).toHaveLength(4);
  });

  it('- reads stdin and needs --name; the same bytes again replay', async () => {
    const none = await cairn(['push', '-'], key(), 'hello');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/needs --name/);
    const rec = okJson(await cairn(['push', '-', '--name', 'notes.md', '--json'], key(), '# from a pipe\n'));
    expect(rec).toMatchObject({ artifact_id: expect.stringMatching(ART_ID), filename: 'notes.md', size_bytes: 14 });
    expect(rec.content_type).toBe('text/markdown');
    const again = expectOk(await cairn(['push', '-', '--name', 'notes.md'], key(), '# from a pipe\n'));
    expect(again.stdout).toMatch(new RegExp(`^${rec.artifact_id}\\s+notes\\.md.*\\(already pushed\\)`));
    const got = expectOk(await cairn(['download', rec.artifact_id, '-o', '-']));
    expect(got.stdout).toBe('# from a pipe\n');
    // --name renames a single file too, and names one upload only.
    const one = await ws.file('x.txt', 'x');
    expect(okJson(await cairn(['push', one, '--name', 'y.txt', '--json'])).filename).toBe('y.txt');
    const two = await cairn(['push', one, one, '--name', 'y.txt']);
    expect(two.code).toBe(2);
  });
});

describe('link --expires', { timeout: 60_000 }, () => {
  it('over the 30-day limit is a usage error naming the limit in days', async () => {
    const r = await cairn(['link', 'art_AAAAAAAAAAAAAAAA', '--expires', '45d']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/at most 30 days .*45d is 45 days/);
    const h = await cairn(['link', 'art_AAAAAAAAAAAAAAAA', '--expires', '721h']);
    expect(h.code).toBe(2);
    expect(h.stderr).toMatch(/at most 30 days .*721h is 30\.0 days/);
    // Exactly 30 days passes the check and reaches the API (which answers for the unknown id).
    const ok = await cairn(['link', 'art_AAAAAAAAAAAAAAAA', '--expires', '30d']);
    expect(ok.code).toBe(1);
    expect(ok.stderr).toMatch(/artifact_not_found/);
  });
});

describe('--json failures are the error envelope on stderr', { timeout: 60_000 }, () => {
  it('an API error, a usage error, a bad option, no key, no server', async () => {
    const missing = await cairn(['get', 'art_AAAAAAAAAAAAAAAA', '--json']);
    expect(missing.code).toBe(1);
    // The server's envelope as it came, request id included.
    expect(envelope(missing)).toEqual({
      error: {
        code: 'artifact_not_found',
        message: expect.any(String),
        status: 404,
        request_id: expect.stringMatching(/^req_[0-9a-f]{32}$/),
      },
    });
    const usage = await cairn(['push', 'no-such-file', '--json']);
    expect(usage.code).toBe(2);
    expect(envelope(usage)).toEqual({
      error: { code: 'invalid_request', message: 'no such file: no-such-file', status: 400 },
    });
    const option = await cairn(['link', 'art_AAAAAAAAAAAAAAAA', '--expires', '45d', '--json']);
    expect(option.code).toBe(2);
    expect(envelope(option).error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(envelope(option).error.message).toMatch(/at most 30 days/);
    const noKey = await cairn(['ls', '--json'], {});
    expect(noKey.code).toBe(2);
    expect(envelope(noKey).error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/no API key/),
    });
    const down = await cairn(['ls', '--json'], { ...key(), CAIRN_API_URL: 'http://127.0.0.1:9' });
    expect(down.code).toBe(1);
    expect(envelope(down).error).toMatchObject({ code: 'network_error', status: 0 });
    // Without --json it stays a line for people, naming the command that finds ids, not the REST call.
    const human = await cairn(['get', 'art_AAAAAAAAAAAAAAAA']);
    expect(human.stderr).toBe(
      'error: artifact_not_found: Artifact art_AAAAAAAAAAAAAAAA not found in this account.\n' +
        'hint: find artifact ids with `cairn ls` (e.g. `cairn ls --filename report.md`).\n',
    );
  });
});
