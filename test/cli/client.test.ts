import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/ports/clock.js';
import { FaultProxy } from '../client/proxy.js';
import { cliWorkspace, expectOk, okJson, runCairn } from '../helpers/cli.js';
import { ART_ID, HOUR_MS, type Rec } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The client commands of the real `cairn` binary (dist/, built first) against a real server.
 * Every run starts a Node process, so the tests get minutes, not the default 30 s, on a busy machine.
 */

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
let work: string;
let configDir: string;

const cairn = (args: string[], env: Record<string, string> = {}, input?: string) => ws.run(args, env, input);
const withKey = (extra: Record<string, string> = {}) => ({ CAIRN_API_KEY: server.apiKey, ...extra });
const ok = expectOk;
const json = okJson;
const file = (name: string, content: string | Buffer) => ws.file(name, content);

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
  work = ws.work;
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});
beforeEach(async () => {
  configDir = await ws.newConfig();
});

describe('push', { timeout: 120_000 }, () => {
  it('uploads with labels and metadata; the same push again returns the same artifact', async () => {
    const p = await file('notes.md', '# Notes\n');
    const args = ['push', p, '--session', 'run-1', '--meta', 'model=gpt-5', '--meta', 'step=2', '--type', 'report'];
    const first = json(await cairn([...args, '--json'], withKey({ CAIRN_AGENT_ID: 'planner' })));
    expect(first).toMatchObject({
      artifact_id: expect.stringMatching(ART_ID),
      filename: 'notes.md',
      content_type: 'text/markdown',
      size_bytes: 8,
      session_id: 'run-1',
      agent_id: 'planner',
      metadata: { model: 'gpt-5', step: '2', type: 'report' },
    });
    const again = json(await cairn([...args, '--json'], withKey({ CAIRN_AGENT_ID: 'planner' })));
    expect(again.artifact_id).toBe(first.artifact_id);
    const human = ok(await cairn(args, withKey({ CAIRN_AGENT_ID: 'planner' })));
    expect(human.stdout).toMatch(new RegExp(`^${first.artifact_id}\\s+notes\\.md\\s+8 B\\s+text/markdown`));
    // Another session is another push: a new artifact.
    const other = json(await cairn(['push', p, '--session', 'run-2', '--json'], withKey()));
    expect(other.artifact_id).not.toBe(first.artifact_id);
    const listed = await api(server.apiUrl, server.apiKey, 'GET', '/v1/artifacts?session_id=run-1');
    expect(listed.json.artifacts).toHaveLength(1);
  });

  it('several files: one artifact each, one JSON line each; --transcript, --ttl, --content-type', async () => {
    const a = await file('t/a.ndjson', '{"role":"user"}\n');
    const b = await file('t/b.txt', 'plain');
    const run = ok(
      await cairn(['push', a, b, '--transcript', '--ttl', '2d', '--content-type', 'text/plain', '--json'], withKey()),
    );
    const out = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Rec);
    expect(out.map((r: Rec) => r.filename)).toEqual(['a.ndjson', 'b.txt']);
    for (const r of out as Rec[]) {
      expect(r.metadata.type).toBe('transcript');
      expect(r.content_type).toBe('text/plain');
      const ttlMs = Date.parse(r.expires_at) - Date.parse(r.created_at);
      expect(ttlMs).toBe(2 * 86_400_000);
    }
    const explicit = json(await cairn(['push', b, '--idempotency-key', 'fixed-1', '--json'], withKey()));
    const explicitAgain = json(await cairn(['push', a, '--idempotency-key', 'fixed-1', '--json'], withKey()));
    expect(explicitAgain.artifact_id).toBe(explicit.artifact_id);
  });

  it('--title publishes after upload; --json then shows the live page', async () => {
    const p = await file('page.md', '# Page\n');
    const r = json(await cairn(['push', p, '--title', 'My page', '--json'], withKey()));
    expect(r.page).toEqual({ public_url: expect.stringMatching(/\/a\/pg_/), visibility: 'unlisted' });
    const human = ok(await cairn(['push', p, '--publish', '--session', 'pub'], withKey()));
    expect(human.stdout).toMatch(/page: http:\/\/\S+\/a\/pg_/);
  });

  it('re-pushing after rm stores a new artifact and says so; re-running then replays the new one', async () => {
    const p = await file('again/again.txt', 'again');
    const args = ['push', p, '--session', 'again', '--json'];
    const first = json(await cairn(args, withKey()));
    ok(await cairn(['rm', first.artifact_id], withKey()));
    const second = await cairn(args, withKey());
    const rec = json(second);
    expect(rec.artifact_id).not.toBe(first.artifact_id);
    expect(second.stderr).toContain(
      `the earlier upload ${first.artifact_id} is gone; stored it again as ${rec.artifact_id}`,
    );
    // Deterministic: the same push again replays the new artifact, quietly.
    const third = await cairn(args, withKey());
    expect(json(third).artifact_id).toBe(rec.artifact_id);
    expect(third.stderr).toBe('');
    const human = ok(await cairn(['push', p, '--session', 'again'], withKey()));
    expect(human.stdout).toMatch(new RegExp(`^${rec.artifact_id}\\s+again\\.txt.*\\(already pushed\\)`));
    // Deleted again: one more hop, still no duplicate of a live artifact.
    ok(await cairn(['rm', rec.artifact_id], withKey()));
    const fourthRun = await cairn(args, withKey());
    const fourth = json(fourthRun);
    expect([first.artifact_id, rec.artifact_id]).not.toContain(fourth.artifact_id);
    expect(fourthRun.stderr).toContain(`earlier uploads ${first.artifact_id}, ${rec.artifact_id} are gone`);
    const live = await api(server.apiUrl, server.apiKey, 'GET', '/v1/artifacts?session_id=again');
    expect(live.json.artifacts.map((a: Rec) => a.artifact_id)).toEqual([fourth.artifact_id]);
  });

  it('an explicit --idempotency-key that replays a deleted artifact fails (exit 1) and says why', async () => {
    const p = await file('again/explicit.txt', 'explicit');
    const first = json(await cairn(['push', p, '--idempotency-key', 'explicit-gone', '--json'], withKey()));
    ok(await cairn(['rm', first.artifact_id], withKey()));
    const r = await cairn(['push', p, '--idempotency-key', 'explicit-gone', '--json'], withKey());
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`replays ${first.artifact_id}, which was deleted; pass a new key`);
    // --json: the failure itself is the API's error envelope, the last line.
    expect(r.stderr).toMatch(/^\{"error":\{"code":"artifact_already_deleted",.*\}\n$/m);
  });

  it('anything that changes the record changes the derived key: a new artifact each', async () => {
    const p = await file('variants/v.txt', 'variant');
    const common = ['push', p, '--session', 'variants', '--json'];
    const ids = new Set<string>();
    for (const extra of [
      [],
      ['--meta', 'model=a'],
      ['--meta', 'model=b'],
      ['--meta', 'model=b', '--meta', 'step=1'],
      ['--type', 'report'],
      ['--ttl', '2d'],
      ['--transcript'],
      ['--content-type', 'text/x-special'],
      ['--agent', 'other'],
    ]) {
      ids.add(json(await cairn([...common, ...extra], withKey())).artifact_id);
    }
    expect(ids.size).toBe(9);
    // Same options in another order: the same key, so a replay.
    const again = json(await cairn([...common, '--meta', 'step=1', '--meta', 'model=b'], withKey()));
    expect(ids.has(again.artifact_id)).toBe(true);
    const listed = await api(server.apiUrl, server.apiKey, 'GET', '/v1/artifacts?session_id=variants');
    expect(listed.json.artifacts).toHaveLength(9);
  });

  it('push a b --json prints a line per file as it completes, so a failure on b keeps a', async () => {
    const proxy = await new FaultProxy(server.apiUrl).start();
    try {
      const a = await file('partial/a.txt', 'first');
      const b = await file('partial/b.txt', 'second');
      proxy.next(
        { pass: true },
        { status: 400, body: { error: { code: 'invalid_request', message: 'no b', status: 400 } } },
      );
      const r = await runCairn(['push', a, b, '--session', 'partial', '--json'], {
        cwd: work,
        configDir,
        apiUrl: proxy.url,
        env: withKey(),
      });
      expect(r.code).toBe(1);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ filename: 'a.txt', artifact_id: expect.stringMatching(ART_ID) });
      expect(JSON.parse(r.stderr)).toEqual({ error: { code: 'invalid_request', message: 'no b', status: 400 } });
    } finally {
      await proxy.close();
    }
  });

  it('usage mistakes exit 2 with a helpful message and upload nothing', async () => {
    const p = await file('u.txt', 'u');
    const cases: [string[], RegExp][] = [
      [['push', p, '--meta', 'novalue'], /key=value/],
      [['push', p, '--meta', '9bad=x'], /must start with a letter/],
      [['push', p, '--ttl', 'forever'], /TTL must be like/],
      [['push', p, '--bogus'], /unknown option '--bogus'/],
      [['push', path.join(work, 'missing.txt')], /no such file: .*missing\.txt/],
      [['push', p, path.join(work, 'missing.txt')], /no such file: .*missing\.txt/],
      [['push', work], /is a folder; add --recursive/],
      [['push', p, p, '--idempotency-key', 'k'], /one file at a time/],
      [['push'], /missing required argument 'files'/],
    ];
    for (const [args, message] of cases) {
      const r = await cairn(args, withKey());
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
    const listed = await api(server.apiUrl, server.apiKey, 'GET', '/v1/artifacts?filename=u.txt');
    expect(listed.json.artifacts).toEqual([]);
  });
});

describe('push after expiry', { timeout: 120_000 }, () => {
  it('a replay of an expired artifact stores a new one and says so', async () => {
    const clock = new ManualClock(Date.now());
    const timed = await startTestServer({ clock });
    try {
      const run = (args: string[]) =>
        runCairn(args, { cwd: work, configDir, apiUrl: timed.apiUrl, env: { CAIRN_API_KEY: timed.apiKey } });
      const p = await file('expiry/short.txt', 'short-lived');
      const args = ['push', p, '--ttl', '1h', '--json'];
      const first = json(await run(args));
      clock.advance(2 * HOUR_MS);
      const again = await run(args);
      const second = json(again);
      expect(second.artifact_id).not.toBe(first.artifact_id);
      expect(again.stderr).toContain(`the earlier upload ${first.artifact_id} is gone; stored it again`);
      expect(Date.parse(second.expires_at) - Date.parse(second.created_at)).toBe(HOUR_MS);
    } finally {
      await timed.close();
    }
  });
});

describe('ls, get, rm', { timeout: 120_000 }, () => {
  let ids: string[] = [];
  beforeAll(async () => {
    ids = [];
    for (const n of [1, 2, 3]) {
      const p = await file(`ls/f${n}.txt`, `file ${n}`);
      const meta = n === 2 ? ['--meta', 'color=red', '--meta', 'size=big'] : n === 3 ? ['--meta', 'color=red'] : [];
      ids.push(json(await cairn(['push', p, '--session', 'ls-run', ...meta, '--json'], withKey())).artifact_id);
    }
  });

  it('prints an aligned table, and the exact body with --json', async () => {
    const human = ok(await cairn(['ls', '--session', 'ls-run'], withKey()));
    const lines = human.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+TYPE\s+SIZE\s+CREATED\s+SESSION\s+AGENT$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([...ids].reverse());
    // CREATED is relative ("just now", "2 min ago" on a slow machine).
    expect(lines[1]).toMatch(/f3\.txt\s+text\/plain\s+6 B\s+(just now|\d+ min ago)\s+ls-run/);
    // Columns line up: every row starts its NAME where the header does.
    const nameAt = lines[0]!.indexOf('NAME');
    for (const l of lines.slice(1)) expect(l.search(/f\d\.txt/)).toBe(nameAt);
    expect(human.stdout).not.toContain('\u001b[');

    const body = json(await cairn(['ls', '--session', 'ls-run', '--json'], withKey()));
    const direct = await api(server.apiUrl, server.apiKey, 'GET', '/v1/artifacts?session_id=ls-run');
    expect(body).toEqual(direct.json);
    const red = json(await cairn(['ls', '--meta', 'color=red', '--json'], withKey()));
    expect(red.artifacts.map((a: Rec) => a.artifact_id)).toEqual([ids[2], ids[1]]);
    // Repeated --meta pairs must all match.
    const redBig = json(await cairn(['ls', '--meta', 'color=red', '--meta', 'size=big', '--json'], withKey()));
    expect(redBig.artifacts.map((a: Rec) => a.artifact_id)).toEqual([ids[1]]);
  });

  it('pages with --limit/--cursor, and --all walks every page', async () => {
    const first = ok(await cairn(['ls', '--session', 'ls-run', '--limit', '1'], withKey()));
    expect(first.stdout.trim().split('\n')).toHaveLength(2);
    const cursor = /--cursor (\S+)/.exec(first.stderr)?.[1];
    expect(cursor).toBeTruthy();
    const second = json(
      await cairn(['ls', '--session', 'ls-run', '--limit', '1', '--cursor', cursor!, '--json'], withKey()),
    );
    expect(second.artifacts[0].artifact_id).toBe(ids[1]);
    const all = json(await cairn(['ls', '--session', 'ls-run', '--limit', '1', '--all', '--json'], withKey()));
    expect(Object.keys(all)).toEqual(['artifacts', 'next_cursor', 'has_more']);
    expect(all).toMatchObject({ next_cursor: null, has_more: false });
    expect(all.artifacts.map((a: Rec) => a.artifact_id)).toEqual([...ids].reverse());
    const allHuman = ok(await cairn(['ls', '--session', 'ls-run', '--limit', '1', '--all'], withKey()));
    expect(allHuman.stdout.trim().split('\n')).toHaveLength(4);
    expect(allHuman.stderr).toBe('');
  });

  it('rejects bad list flags with exit 2', async () => {
    for (const [args, message] of [
      [['ls', '--limit', '0'], /1 to 200/],
      [['ls', '--limit', 'ten'], /1 to 200/],
      [['ls', ...Array.from({ length: 9 }, (_, i) => ['--meta', `k${i}=v`]).flat()], /at most 8 --meta pairs/],
      [['ls', '--created-after', 'yesterday-ish'], /ISO date/],
    ] as const) {
      const r = await cairn([...args], withKey());
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const empty = ok(await cairn(['ls', '--session', 'nobody-here'], withKey()));
    expect(empty.stdout.trim()).toBe('No artifacts.');
    const recent = json(await cairn(['ls', '--session', 'ls-run', '--created-after', '1h', '--json'], withKey()));
    expect(recent.artifacts).toHaveLength(3);
  });

  it('get shows one record; rm deletes it; API errors exit 1 with code and message', async () => {
    const id = ids[0]!;
    const human = ok(await cairn(['get', id], withKey()));
    expect(human.stdout).toMatch(new RegExp(`ID\\s+${id}`));
    expect(human.stdout).toMatch(/Size\s+6 B \(6 bytes\)/);
    expect(human.stdout).toMatch(/Session\s+ls-run/);
    expect(human.stdout).toMatch(/Expires\s+\S+ \(in 30 d\)/);
    const body = json(await cairn(['get', id, '--json'], withKey()));
    expect(body).toEqual((await api(server.apiUrl, server.apiKey, 'GET', `/v1/artifacts/${id}`)).json);

    expect(ok(await cairn(['rm', id], withKey())).stdout).toContain(`Deleted ${id}.`);
    // A repeat succeeds and says so (docs/cli.md, "Exit codes").
    const again = await cairn(['rm', id, '--json'], withKey());
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ artifact_id: id, deleted: true, already_deleted: true });
    expect(ok(await cairn(['rm', id], withKey())).stdout).toContain(`${id} was already deleted.`);
    const del = json(await cairn(['rm', ids[2]!, '--json'], withKey()));
    expect(del).toEqual({ artifact_id: ids[2], deleted: true, deleted_at: expect.any(String) });
    const missing = await cairn(['get', 'art_AAAAAAAAAAAAAAAA'], withKey());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: artifact_not_found: /);
    // The API's message cites a REST call; the CLI names its own command instead.
    expect(missing.stderr).not.toContain('/v1/');
    expect(missing.stderr).toContain('`cairn ls`');
  });
});

describe('download and link', { timeout: 120_000 }, () => {
  let id = '';
  let content: Buffer;
  beforeAll(async () => {
    content = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(300_000)]);
    id = json(await cairn(['push', await file('bin/data.bin', content), '--json'], withKey())).artifact_id;
  });

  it('saves under the artifact filename, refuses to overwrite without --force, and writes stdout byte-exact', async () => {
    const dir = await mkdtemp(path.join(work, 'dl-'));
    const first = ok(await cairn(['download', id, '-o', dir], withKey()));
    expect(first.stdout).toMatch(/Saved .*data\.bin \(300 KB\)/);
    expect((await readFile(path.join(dir, 'data.bin'))).equals(content)).toBe(true);

    await writeFile(path.join(dir, 'data.bin'), 'keep me');
    const refused = await cairn(['download', id, '-o', path.join(dir, 'data.bin')], withKey());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already exists; pass --force/);
    expect(await readFile(path.join(dir, 'data.bin'), 'utf8')).toBe('keep me');

    const forced = json(
      await cairn(['download', id, '-o', path.join(dir, 'data.bin'), '--force', '--json'], withKey()),
    );
    expect(forced).toEqual({ artifact_id: id, path: path.join(dir, 'data.bin'), size_bytes: content.length });
    expect((await readFile(path.join(dir, 'data.bin'))).equals(content)).toBe(true);

    for (const [target, message] of [
      [path.join(dir, 'nowhere', 'x.bin'), /no such folder: .*nowhere/],
      [path.join(dir, 'missing-dir') + path.sep, /no such folder: .*missing-dir/],
    ] as const) {
      const r = await cairn(['download', id, '-o', target], withKey());
      expect(r.code, target).toBe(2);
      expect(r.stderr).toMatch(message);
    }

    const piped = ok(await cairn(['download', id, '-o', '-'], withKey()));
    expect(piped.bytes.equals(content)).toBe(true);
    expect((await cairn(['download', id, '-o', '-', '--json'], withKey())).code).toBe(2);
  });

  it('defaults to the artifact filename in the current folder', async () => {
    const plain = json(await cairn(['push', await file('src/plain.txt', 'plain'), '--json'], withKey()));
    const r = ok(await cairn(['download', plain.artifact_id], withKey()));
    expect(r.stdout).toMatch(/Saved plain\.txt \(5 B\)/);
    expect(await readFile(path.join(work, 'plain.txt'), 'utf8')).toBe('plain');
  });

  it('download-url prints one working URL per id in order; a missing id goes to stderr with exit 1', async () => {
    const other = json(await cairn(['push', await file('src/other-dl.txt', 'other bytes'), '--json'], withKey()));
    const both = ok(await cairn(['download-url', other.artifact_id, id], withKey()));
    const urls = both.stdout.trim().split('\n');
    expect(urls).toHaveLength(2);
    expect(await (await fetch(urls[0]!)).text()).toBe('other bytes');
    expect(Buffer.from(await (await fetch(urls[1]!)).arrayBuffer()).equals(content)).toBe(true);
    expect(both.stderr).toMatch(/one hour/);

    // 21 ids take two API calls; the answer is still one list in order.
    const many = json(await cairn(['download-url', ...Array.from({ length: 21 }, () => id), '--json'], withKey()));
    expect(many.download_urls).toHaveLength(21);

    const unknown = 'art_0000000000000000';
    const mixed = await cairn(['download-url', unknown, other.artifact_id], withKey());
    expect(mixed.code).toBe(1);
    expect(mixed.stdout.trim().split('\n')).toHaveLength(1);
    expect(mixed.stderr).toMatch(new RegExp(`error: ${unknown}: artifact_not_found`));
  });

  it('link prints a working URL; --expires sets its lifetime; a bad duration exits 2', async () => {
    const human = ok(await cairn(['link', id], withKey()));
    const url = human.stdout.trim();
    expect(url).toMatch(/\/lnk_[A-Za-z0-9]{20}$/);
    expect(human.stderr).toMatch(/expires .*\(in 7 d\)/);
    const res = await fetch(url);
    expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);
    const body = json(await cairn(['link', id, '--expires', '12h', '--json'], withKey()));
    expect(Date.parse(body.expires_at) - Date.parse(body.created_at)).toBe(12 * 3_600_000);
    expect(body).toMatchObject({ artifact_id: id, url: expect.stringContaining('/lnk_') });
    const bad = await cairn(['link', id, '--expires', 'soon'], withKey());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/7d, 12h/);
  });

  it('links lists the live links newest first; unlink revokes one at once and can be repeated', async () => {
    const first = json(await cairn(['link', id, '--json'], withKey()));
    const second = json(await cairn(['link', id, '--json'], withKey()));
    const made = [first, second];
    const listed = json(await cairn(['links', id, '--all', '--json'], withKey()));
    expect(listed.has_more).toBe(false);
    const listedIds = listed.links.map((l: { link_id: string }) => l.link_id);
    for (const l of made) expect(listedIds).toContain(l.link_id);
    const human = ok(await cairn(['links', id], withKey()));
    expect(human.stdout).toMatch(/^ID\s+CREATED\s+EXPIRES\s+URL/);
    expect(human.stdout).toContain(first.link_id);

    const target = first;
    expect(ok(await cairn(['unlink', target.link_id], withKey())).stdout).toContain(`Revoked ${target.link_id}`);
    expect((await fetch(target.url)).status).toBe(404);
    expect(json(await cairn(['unlink', target.link_id, '--json'], withKey()))).toEqual({
      link_id: target.link_id,
      revoked: true,
    });
    const after = json(await cairn(['links', id, '--json'], withKey()));
    expect(after.links.map((l: { link_id: string }) => l.link_id)).not.toContain(target.link_id);
    expect((await fetch(second.url)).status).toBe(200);
    // A malformed id is a usage error, found before any request (exit-rules.test.ts has the rest).
    const bad = await cairn(['unlink', 'lnk_nope'], withKey());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/A link id is lnk_ and 20 letters or digits/);
  });
});
