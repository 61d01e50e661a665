import { execFile } from 'node:child_process';
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, okJson } from '../helpers/cli.js';
import { sha256 } from '../helpers/e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** `cairn download --session` (folder, resumable; --zip; --tar) and `cairn link --session`, of the real binary. */
const run = promisify(execFile);
const CHECK = path.resolve(import.meta.dirname, '../helpers/archive_check.py');

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
const cairn = (args: string[]) => ws.run(args, { CAIRN_API_KEY: server.apiKey });

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
  for (const [name, content] of [
    ['src/report.md', '# Report\n'],
    ['src/evil\u202Etxt.exe', 'bidi'],
    ['src/data.bin', Buffer.alloc(70_000, 7)],
  ] as const) {
    expectOk(await cairn(['push', await ws.file(name, content), '--session', 'run-42']));
  }
  expectOk(await cairn(['push', await ws.file('again/report.md', '# Again\n'), '--session', 'run-42']));
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

describe('cairn download --session', { timeout: 120_000 }, () => {
  it('writes the session into ./<session> with manifest.json, and a second run skips what is there', async () => {
    const first = okJson(await cairn(['download', '--session', 'run-42', '--json']));
    const folder = path.join(ws.work, 'run-42');
    expect(first).toMatchObject({ session_id: 'run-42', path: folder, artifact_count: 4, downloaded: 4, skipped: 0 });
    const manifest = JSON.parse(await readFile(path.join(folder, 'manifest.json'), 'utf8'));
    const names = manifest.entries.map((e: { path: string }) => e.path);
    expect(names.slice(0, 3)).toEqual(['report.md', 'eviltxt.exe', 'data.bin']);
    expect(names[3]).toMatch(/^report\.art_[A-Za-z0-9]{16}\.md$/);
    for (const e of manifest.entries) {
      expect(sha256(await readFile(path.join(folder, e.path)))).toBe(e.sha256);
    }
    expect((await readdir(folder)).sort()).toEqual([...names, 'manifest.json'].sort());

    // Resume: one file damaged and one removed are fetched again, the rest are kept.
    await writeFile(path.join(folder, 'data.bin'), 'truncated');
    await rm(path.join(folder, 'report.md'));
    const keptBefore = (await stat(path.join(folder, names[3]))).mtimeMs;
    const again = okJson(await cairn(['download', '--session', 'run-42', '--json']));
    expect(again).toMatchObject({ downloaded: 2, skipped: 2, size_bytes: 70_000 + 9 });
    expect((await stat(path.join(folder, names[3]))).mtimeMs).toBe(keptBefore);
    expect(sha256(await readFile(path.join(folder, 'data.bin')))).toBe(sha256(Buffer.alloc(70_000, 7)));
    const human = expectOk(await cairn(['download', '--session', 'run-42', '-o', 'run-42']));
    expect(human.stdout).toMatch(/Saved 4 files in run-42 \(0 downloaded, 0 B; 4 already there\)/);
  });

  it('--zip and --tar write one archive that Python opens and checks', async () => {
    for (const [flag, file, format] of [
      ['--zip', 'run.zip', 'zip'],
      ['--tar', 'run.tar.gz', 'tar.gz'],
    ] as const) {
      const r = okJson(await cairn(['download', '--session', 'run-42', flag, file, '--json']));
      expect(r).toMatchObject({ session_id: 'run-42', format, artifact_count: 4 });
      const target = path.join(ws.work, file);
      expect(r.size_bytes).toBe((await stat(target)).size);
      const out = JSON.parse((await run('python3', [CHECK, target, format, path.join(ws.work, `x-${format}`)])).stdout);
      expect(out.problems).toEqual([]);
      const refused = await cairn(['download', '--session', 'run-42', flag, file]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/already exists; pass --force/);
    }
  });

  it('refuses mixed arguments as usage errors; an unknown session is the API’s 404', async () => {
    expect((await cairn(['download', '--session', 'run-42', '--zip', 'a.zip', '--tar', 'a.tgz'])).code).toBe(2);
    expect((await cairn(['download', 'art_0000000000000000', '--session', 'run-42'])).code).toBe(2);
    expect((await cairn(['download', '--zip', 'a.zip'])).code).toBe(2);
    expect((await cairn(['download'])).code).toBe(2);
    const unknown = await cairn(['download', '--session', 'no-such-run', '--json']);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error.code).toBe('session_not_found');
  });
});

describe('cairn link --session', { timeout: 60_000 }, () => {
  it('links a sealed session; an open one is refused', async () => {
    const open = await cairn(['link', '--session', 'run-42', '--json']);
    expect(open.code).toBe(1);
    expect(JSON.parse(open.stderr).error.code).toBe('invalid_request');
    expectOk(await cairn(['seal', 'run-42']));
    const human = expectOk(await cairn(['link', '--session', 'run-42', '--expires', '12h']));
    expect(human.stdout.trim()).toMatch(new RegExp(`^${server.viewerUrl}/s/lnk_[A-Za-z0-9]{20}$`));
    expect(human.stderr).toMatch(/archive: http/);
    const json = okJson(await cairn(['link', '--session', 'run-42', '--json']));
    expect(json.session_id).toBe('run-42');
    expect((await fetch(json.archive_url)).status).toBe(200);
    expect((await cairn(['link'])).code).toBe(2);
    expect((await cairn(['link', 'art_0000000000000000', '--session', 'run-42'])).code).toBe(2);
  });
});
