import { createHash, randomBytes } from 'node:crypto';
import { open, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { artifactIdOfUploadUrl, CairnClient } from 'cairn-store-sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, hasScript, okJson, runCairn, spawnCairn } from '../helpers/cli.js';
import { ART_ID } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { TusProxy } from '../helpers/tus-proxy.js';

/**
 * `cairn push` of files over the resumable threshold: tus when the server offers it, a state file
 * while the upload is under way, a re-run after a SIGKILL that goes on from the server's offset,
 * --no-resume, and the fallback for a server without tus. The real binary (dist/) against a real
 * server, through a real proxy that counts (and can slow down) the bytes that go through.
 */

const MB = 1024 * 1024;
const THRESHOLD = MB;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let server: TestServer;
let proxy: TusProxy;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;

const env = (extra: Record<string, string> = {}) => ({
  CAIRN_API_KEY: server.apiKey,
  CAIRN_RESUMABLE_THRESHOLD_BYTES: String(THRESHOLD),
  ...extra,
});
const push = (args: string[], extra: Record<string, string> = {}) => ws.run(['push', ...args], env(extra));
const stateDir = () => path.join(ws.configDir, 'uploads');

async function stateFiles(): Promise<string[]> {
  try {
    return (await readdir(stateDir())).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
}

/** The upload URL of the one saved upload, or undefined while there is none. */
async function savedUrl(): Promise<string | undefined> {
  const [one] = await stateFiles();
  if (!one) return undefined;
  return JSON.parse(await readFile(path.join(stateDir(), one), 'utf8')).upload_url;
}

/** HEAD on the server itself (not through the proxy): its offset, or null for 404. */
async function serverOffset(uploadUrl: string): Promise<number | null> {
  const res = await fetch(uploadUrl.replace(proxy.url, server.apiUrl), {
    method: 'HEAD',
    headers: { 'tus-resumable': '1.0.0', authorization: `Bearer ${server.apiKey}` },
  });
  return res.status === 404 ? null : Number(res.headers.get('upload-offset'));
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>): Promise<T> {
  const until = Date.now() + 20_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== null && v !== false) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function downloadedHash(id: string): Promise<string> {
  const { body } = await new CairnClient({ apiKey: server.apiKey, baseUrl: server.apiUrl }).download(id);
  return sha256(Buffer.from(await new Response(body).arrayBuffer()));
}

/**
 * Starts `cairn push` of an 8 MB file through the proxy slowed to 2 MB/s, and SIGKILLs it once
 * 2 MB have gone through: the saved upload URL and the server's offset, once settled.
 */
async function interruptedPush(name: string) {
  const content = randomBytes(8 * MB);
  const file = await ws.file(name, content);
  proxy.bytesPerSecond = 2 * MB;
  const { child, done } = spawnCairn(['push', file, '--json'], {
    cwd: ws.work,
    configDir: ws.configDir,
    apiUrl: proxy.url,
    env: env(),
  });
  const url = await waitFor('the state file', savedUrl);
  // The server records a PATCH's bytes when its body ends (or breaks off): watch the proxy instead.
  await waitFor('two megabytes sent', async () => proxy.patchedBytes() >= 2 * MB);
  child.kill('SIGKILL');
  proxy.cutAll();
  const killed = await done;
  expect(killed.stdout).toBe('');
  proxy.reset();
  // The server finishes with the cut request in its own time: wait for the offset to stop moving.
  let offset = await serverOffset(url);
  for (;;) {
    await sleep(300);
    const now = await serverOffset(url);
    if (now === offset) break;
    offset = now;
  }
  expect(offset).toBeGreaterThan(0);
  expect(offset).toBeLessThan(content.length);
  expect(await stateFiles()).toHaveLength(1);
  return { file, content, url, offset: offset as number };
}

beforeAll(async () => {
  server = await startTestServer();
  proxy = await new TusProxy(server.apiUrl).start();
  ws = await cliWorkspace(proxy.url);
});
afterAll(async () => {
  await proxy?.close();
  await server?.close();
  await ws?.remove();
});
beforeEach(async () => {
  proxy.reset();
  await ws.newConfig();
});

describe('push over the resumable threshold', { timeout: 120_000 }, () => {
  it('goes up over tus with the derived key, prints the record as --json always did, and leaves no state', async () => {
    const content = randomBytes(3 * MB);
    const file = await ws.file('over.bin', content);
    const rec = okJson(await push([file, '--session', 'tus-cli', '--meta', 'k=v', '--json']));
    expect(rec).toMatchObject({
      artifact_id: expect.stringMatching(ART_ID),
      filename: 'over.bin',
      size_bytes: content.length,
      content_hash: sha256(content),
      session_id: 'tus-cli',
      metadata: { k: 'v' },
    });
    expect(rec).toEqual((await api(server.apiUrl, server.apiKey, 'GET', `/v1/artifacts/${rec.artifact_id}`)).json);
    expect(proxy.lines()).toEqual([
      'OPTIONS /v1/uploads/tus',
      'POST /v1/uploads/tus',
      `PATCH /v1/uploads/tus/${rec.artifact_id}`,
      `GET /v1/artifacts/${rec.artifact_id}`,
    ]);
    const key = proxy.seen[1]?.headers['idempotency-key'];
    expect(key).toMatch(/^cairn-[0-9a-f]{64}$/);
    expect(await downloadedHash(rec.artifact_id)).toBe(sha256(content));
    expect(await stateFiles()).toEqual([]);

    // The same push again: replayed by the derived key, nothing sent. A state file older than the
    // server keeps uploads (of a push never re-run) is swept on the way; a recent one stays.
    const stale = path.join(stateDir(), `${'0'.repeat(64)}.json`);
    const recent = path.join(stateDir(), `${'1'.repeat(64)}.json`);
    await writeFile(stale, '{}');
    await writeFile(recent, '{}');
    const dayAndTwoHoursAgo = new Date(Date.now() - 26 * 3_600_000);
    await utimes(stale, dayAndTwoHoursAgo, dayAndTwoHoursAgo);
    proxy.reset();
    const again = expectOk(await push([file, '--session', 'tus-cli', '--meta', 'k=v']));
    expect(again.stdout).toMatch(new RegExp(`^${rec.artifact_id}\\s+over\\.bin.*\\(already pushed\\)`));
    expect(proxy.seen.find((r) => r.method === 'POST')?.headers['idempotency-key']).toBe(key);
    expect(proxy.patchedBytes()).toBe(0);
    expect(await stateFiles()).toEqual([path.basename(recent)]);
  });

  it('in pieces of CAIRN_RESUMABLE_CHUNK_BYTES: one PATCH each, from where the last one ended', async () => {
    const content = randomBytes(3 * MB + 5);
    const rec = okJson(
      await push([await ws.file('pieces.bin', content), '--json'], { CAIRN_RESUMABLE_CHUNK_BYTES: String(MB) }),
    );
    const patches = proxy.seen.filter((r) => r.method === 'PATCH');
    expect(patches.map((p) => Number(p.headers['upload-offset']))).toEqual([0, MB, 2 * MB, 3 * MB]);
    expect(patches.map((p) => p.bodyBytes)).toEqual([MB, MB, MB, 5]);
    expect(await downloadedHash(rec.artifact_id)).toBe(sha256(content));
  });

  it('at the threshold or below: one multipart request, as before (and no OPTIONS)', async () => {
    const file = await ws.file('at.bin', randomBytes(THRESHOLD));
    const rec = okJson(await push([file, '--json']));
    expect(rec.size_bytes).toBe(THRESHOLD);
    expect(proxy.lines()).toEqual(['POST /v1/artifacts']);
  });

  it('the real threshold: 64 MiB + 1 byte goes resumably without any setting', async () => {
    const file = path.join(ws.work, 'real-threshold.bin');
    const fh = await open(file, 'w');
    await fh.truncate(64 * MB + 1);
    await fh.write(randomBytes(4096), 0, 4096, 0);
    await fh.close();
    const rec = okJson(await ws.run(['push', file, '--json'], { CAIRN_API_KEY: server.apiKey }));
    expect(rec.size_bytes).toBe(64 * MB + 1);
    expect(proxy.lines()).toContain('POST /v1/uploads/tus');
    expect(proxy.patchedBytes()).toBe(64 * MB + 1);
  });

  it('a push killed part way, run again, goes on from the server offset and sends only the rest', async () => {
    const { file, content, url, offset } = await interruptedPush('killed.bin');
    const again = expectOk(await push([file, '--json']));
    const rec = JSON.parse(again.stdout);
    expect(rec.artifact_id).toBe(artifactIdOfUploadUrl(url));
    expect(again.stderr).toMatch(/killed\.bin: resuming at \d/);
    // No new upload was made: the saved one was picked up where the server had it.
    expect(proxy.lines().filter((l) => l.startsWith('POST'))).toEqual([]);
    expect(proxy.patchedBytes()).toBeLessThanOrEqual(content.length - offset);
    expect(proxy.patchedBytes()).toBeGreaterThan(0);
    expect(rec.content_hash).toBe(sha256(content));
    expect(await downloadedHash(rec.artifact_id)).toBe(sha256(content));
    expect(await stateFiles()).toEqual([]);
  });

  it.skipIf(!hasScript)('on a terminal, the resumed push draws its bar from the server offset on', async () => {
    const { file, content, offset } = await interruptedPush('bar.bin');
    const out = path.join(ws.work, 'bar.json');
    const run = expectOk(
      await runCairn(['push', file, '--json'], {
        cwd: ws.work,
        configDir: ws.configDir,
        apiUrl: proxy.url,
        env: env(),
        terminal: { stdoutTo: out },
      }),
    );
    expect(JSON.parse(await readFile(out, 'utf8')).content_hash).toBe(sha256(content));
    expect(run.stdout).toMatch(/bar\.bin: resuming at \d/);
    const percents = [...run.stdout.matchAll(/push bar\.bin \[[#-]+\]\s+(\d+)%/g)].map((m) => Number(m[1]));
    expect(percents.length).toBeGreaterThan(0);
    expect(percents[0]).toBeGreaterThanOrEqual(Math.floor((offset / content.length) * 100));
    expect(percents.at(-1)).toBe(100);
  });

  it('--no-resume abandons the saved upload and starts over; a plain re-run then replays that new artifact', async () => {
    const { file, content, url } = await interruptedPush('restart.bin');
    const restarted = expectOk(await push([file, '--no-resume', '--json']));
    const rec = JSON.parse(restarted.stdout);
    expect(restarted.stderr).not.toMatch(/resuming/);
    expect(proxy.patchedBytes()).toBe(content.length);
    expect(await serverOffset(url)).toBeNull(); // terminated
    expect(rec.artifact_id).not.toBe(artifactIdOfUploadUrl(url));
    expect(await downloadedHash(rec.artifact_id)).toBe(sha256(content));
    expect(await stateFiles()).toEqual([]);

    proxy.reset();
    const again = expectOk(await push([file]));
    expect(again.stdout).toMatch(new RegExp(`^${rec.artifact_id}\\s+restart\\.bin.*\\(already pushed\\)`));
    expect(proxy.patchedBytes()).toBe(0);
  });

  it('the same file pushed with other options is another upload: the saved one is not picked up', async () => {
    const { file, content, url } = await interruptedPush('other-options.bin');
    const rec = okJson(await push([file, '--session', 'another', '--json']));
    expect(rec.artifact_id).not.toBe(artifactIdOfUploadUrl(url));
    expect(rec.session_id).toBe('another');
    expect(proxy.lines()).toContain('POST /v1/uploads/tus');
    expect(proxy.patchedBytes()).toBe(content.length);
    expect(await downloadedHash(rec.artifact_id)).toBe(sha256(content));
  });

  it('a saved upload the server no longer knows (404) starts a new upload', async () => {
    const { file, content, url } = await interruptedPush('expired.bin');
    const gone = await fetch(url.replace(proxy.url, server.apiUrl), {
      method: 'DELETE',
      headers: { 'tus-resumable': '1.0.0', authorization: `Bearer ${server.apiKey}` },
    });
    expect(gone.status).toBe(204);
    const rec = okJson(await push([file, '--json']));
    expect(proxy.patchedBytes()).toBe(content.length);
    expect(rec.content_hash).toBe(sha256(content));
    expect(await downloadedHash(rec.artifact_id)).toBe(sha256(content));
    expect(await stateFiles()).toEqual([]);
  });

  it('re-pushing after rm stores a new artifact and says so; re-running then replays the new one', async () => {
    const content = randomBytes(2 * MB);
    const file = await ws.file('removed.bin', content);
    const first = okJson(await push([file, '--json']));
    expectOk(await ws.run(['rm', first.artifact_id], env()));
    const second = expectOk(await push([file, '--json']));
    const rec = JSON.parse(second.stdout);
    expect(rec.artifact_id).not.toBe(first.artifact_id);
    expect(second.stderr).toContain(`removed.bin: the earlier upload is gone; stored it again as ${rec.artifact_id}.`);
    expect(await downloadedHash(rec.artifact_id)).toBe(sha256(content));
    proxy.reset();
    const third = expectOk(await push([file]));
    expect(third.stdout).toMatch(new RegExp(`^${rec.artifact_id}\\s+removed\\.bin.*\\(already pushed\\)`));
    expect(third.stderr).toBe('');
    expect(proxy.patchedBytes()).toBe(0);
  });

  it('an explicit --idempotency-key whose upload is gone fails (exit 1) and asks for a new key', async () => {
    const file = await ws.file('explicit.bin', randomBytes(2 * MB));
    const first = okJson(await push([file, '--idempotency-key', 'tus-explicit-1', '--json']));
    expectOk(await ws.run(['rm', first.artifact_id], env()));
    const again = await push([file, '--idempotency-key', 'tus-explicit-1']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('--idempotency-key tus-explicit-1 replays an upload, which is gone; pass a new key');
    expect(again.stderr).toContain('error: not_found: The upload made with Idempotency-Key tus-explicit-1 is gone');
    expect(proxy.patchedBytes()).toBe(2 * MB); // the first push only
  });

  it('a server without tus (OPTIONS 404, an older Cairn): one multipart request, as before', async () => {
    proxy.answerNext('OPTIONS', '/v1/uploads/tus', {
      status: 404,
      body: { error: { code: 'not_found', message: 'No route OPTIONS /v1/uploads/tus.', status: 404 } },
    });
    const content = randomBytes(3 * MB);
    const rec = okJson(await push([await ws.file('old-server.bin', content), '--json']));
    expect(rec.content_hash).toBe(sha256(content));
    expect(proxy.lines()).toEqual(['OPTIONS /v1/uploads/tus', 'POST /v1/artifacts']);
    expect(await stateFiles()).toEqual([]);
  });

  it('--help tells about resuming and --no-resume; a bad threshold setting is a usage error', async () => {
    const help = expectOk(await ws.run(['push', '--help']));
    expect(help.stdout).toContain('--no-resume');
    expect(help.stdout).toMatch(/64 MiB go up resumably/);
    const bad = await push([await ws.file('small.txt', 'x')], { CAIRN_RESUMABLE_THRESHOLD_BYTES: 'lots' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/CAIRN_RESUMABLE_THRESHOLD_BYTES must be a whole number of bytes/);
  });
});
