import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newArtifactId } from '../../src/core/ids.js';
import { ManualClock } from '../../src/ports/clock.js';
import { expectError, HOUR_MS, put, type Rec, sha256 } from '../helpers/e2e.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { startTestS3, type TestS3 } from '../helpers/test-s3.js';

/**
 * Archives of a session and of a list query (GET /v1/sessions/{id}/archive, GET
 * /v1/artifacts/archive), on the local blob folder and on S3: each archive is opened by clients
 * Cairn did not write (Python's zipfile and tarfile, Info-ZIP's unzip, libarchive's bsdtar, GNU
 * tar), every entry checked against manifest.json, and a corpus of hostile filenames extracted
 * by each into a fresh folder, where nothing may land outside it or under another name.
 */
const run = promisify(execFile);
const CHECK = path.resolve(import.meta.dirname, '../helpers/archive_check.py');

/** Names a stored filename may have (checkFilename allows them) that an extractor could misuse. */
const HOSTILE = [
  '...',
  '..txt',
  '.bashrc',
  'evil\u202Egpj.exe',
  'zero\u200Bwidth.txt',
  'isolate\u2066x\u2069.txt',
  'CON',
  'con.txt',
  'Aux.tar.gz',
  'trailing.',
  'trailing ',
  ' leading.txt',
  'C:evil.txt',
  'what?.txt',
  'star*.txt',
  'pipe|.txt',
  'quote".txt',
  '<tag>.txt',
  'manifest.json',
  'MANIFEST.JSON',
  'Report.md',
  'report.md',
  'report.md',
  'caf\u00e9.txt',
  'cafe\u0301.txt',
  `${'\u00e9'.repeat(120)}.txt`,
  '-rf',
  '\ud83d\udce6 box.bin',
];

interface Backend {
  name: string;
  start(): Promise<{ s: TestServer; close(): Promise<void> }>;
}

const BACKENDS: Backend[] = [
  {
    name: 'fs',
    async start() {
      const s = await startTestServer({ clock: new ManualClock(Date.UTC(2026, 10, 1)) });
      return { s, close: () => s.close() };
    },
  },
  {
    name: 's3',
    async start() {
      const s3: TestS3 = await startTestS3({ buckets: ['cairn-archives'] });
      process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
      process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
      const s = await startTestServer({
        clock: new ManualClock(Date.UTC(2026, 10, 1)),
        env: {
          CAIRN_S3_BUCKET: 'cairn-archives',
          CAIRN_S3_ENDPOINT: s3.endpoint,
          CAIRN_S3_REGION: s3.region,
          CAIRN_S3_FORCE_PATH_STYLE: 'true',
          CAIRN_S3_PREFIX: `archives-${process.pid}-${Date.now()}/`,
        },
      });
      return {
        s,
        async close() {
          await s.close();
          await s3.close();
        },
      };
    },
  },
];

/** The archive call, not following its redirect. */
async function archiveCall(s: TestServer, key: string | null, pathname: string) {
  const res = await fetch(s.apiUrl + pathname, {
    redirect: 'manual',
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : null };
}

/** Fetches an archive URL into a file of a fresh folder; returns the file, its headers and the folder. */
async function download(url: string) {
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-archive-'));
  const res = await fetch(url);
  const body = Buffer.from(await res.arrayBuffer());
  const file = path.join(dir, 'archive');
  await writeFile(file, body);
  return { status: res.status, headers: res.headers, body, file, dir };
}

/** Every file below `dir`, relative, with its SHA-256. */
async function extracted(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const full = path.join(e.parentPath, e.name);
    out[path.relative(dir, full)] = sha256(await readFile(full));
  }
  return out;
}

/** What each entry's bytes should hash to, by entry name, from the manifest (plus the manifest itself). */
const expectedFiles = (manifest: Rec, manifestHash: string) =>
  Object.fromEntries([['manifest.json', manifestHash], ...manifest.entries.map((e: Rec) => [e.path, e.sha256])]);

/** Python's check, then each command-line extractor into its own folder; returns the manifest. */
async function openEverywhere(file: string, format: 'zip' | 'tar.gz', dir: string): Promise<Rec> {
  const py = await run('python3', [CHECK, file, format, path.join(dir, 'python')]).catch((err) => {
    const problems = err.stdout ? JSON.parse(err.stdout).problems : err.stderr;
    throw new Error(`archive_check.py: ${JSON.stringify(problems)}`);
  });
  const report = JSON.parse(py.stdout);
  expect(report.problems).toEqual([]);
  const manifestHash = (await extracted(path.join(dir, 'python')))['manifest.json'] as string;
  const want = expectedFiles(report.manifest, manifestHash);
  expect(await extracted(path.join(dir, 'python'))).toEqual(want);

  const tools: [string, string[]][] =
    format === 'zip'
      ? [
          ['unzip', ['-q', file, '-d', 'DIR']],
          ['bsdtar', ['-xf', file, '-C', 'DIR']],
        ]
      : [
          ['tar', ['-xzf', file, '-C', 'DIR']],
          ['bsdtar', ['-xzf', file, '-C', 'DIR']],
        ];
  if (format === 'zip') {
    const t = await run('unzip', ['-t', file]);
    expect(t.stdout).toMatch(/No errors detected/);
  }
  for (const [tool, args] of tools) {
    const into = path.join(dir, tool);
    await run('mkdir', ['-p', into]);
    await run(
      tool,
      args.map((a) => (a === 'DIR' ? into : a)),
      { env: { ...process.env, LC_ALL: 'C.UTF-8' } },
    );
    expect(await extracted(into), tool).toEqual(want);
  }
  return report;
}

describe.each(BACKENDS)('archives on the $name', (backend) => {
  let s: TestServer;
  let close: () => Promise<void>;
  let clock: ManualClock;
  beforeAll(async () => {
    ({ s, close } = await backend.start());
    clock = s.core.deps.clock as ManualClock;
  });
  afterAll(async () => {
    await close?.();
  });

  it('a session streams as a zip and as a tar.gz that every client opens and checks against the manifest', async () => {
    const key = await s.createTenant(`archive-${backend.name}`, 'pro');
    const stored: Rec[] = [];
    for (const [i, filename] of HOSTILE.entries()) {
      stored.push(
        await put(s.apiUrl, key, `bytes of ${i}: ${filename}\n`, {
          filename,
          session_id: 'run-42',
          agent_id: i % 2 ? 'planner' : 'writer',
          metadata: { i, kind: i % 3 ? 'note' : 'report' },
        }),
      );
      clock.advance(1000);
    }
    const binary = Buffer.alloc(300_000);
    for (let i = 0; i < binary.length; i++) binary[i] = (i * 7919) % 251;
    stored.push(await put(s.apiUrl, key, '', { filename: 'empty.txt', session_id: 'run-42' }));
    clock.advance(1000);
    const bin = await put(s.apiUrl, key, binary.toString('latin1'), { filename: 'data.bin', session_id: 'run-42' });
    clock.advance(1000);
    // Left out: a deleted artifact, one past its TTL, and another session's.
    const gone = await put(s.apiUrl, key, 'deleted', { filename: 'deleted.txt', session_id: 'run-42' });
    expect((await api(s.apiUrl, key, 'DELETE', `/v1/artifacts/${gone.artifact_id}`)).status).toBe(200);
    await put(s.apiUrl, key, 'short-lived', { filename: 'expired.txt', session_id: 'run-42', ttl: '1h' });
    await put(s.apiUrl, key, 'elsewhere', { filename: 'other.txt', session_id: 'run-43' });
    clock.advance(HOUR_MS + 1000);
    const live = [...stored, bin];

    for (const format of ['zip', 'tar.gz'] as const) {
      const r = await archiveCall(s, key, `/v1/sessions/run-42/archive${format === 'zip' ? '' : '?format=tar.gz'}`);
      expect(r.status, r.text).toBe(303);
      expect(r.headers.get('location')).toBe(r.json.archive_url);
      expect(r.json).toMatchObject({
        expires_in: 3600,
        format,
        filename: `run-42.${format}`,
        artifact_count: live.length,
        size_bytes: live.reduce((n, a) => n + a.size_bytes, 0),
      });
      // The bytes come from the content origin, never the API's.
      expect(new URL(r.json.archive_url).origin).toBe(s.contentUrl);

      const got = await download(r.json.archive_url);
      try {
        expect(got.status).toBe(200);
        expect(got.headers.get('content-type')).toBe(format === 'zip' ? 'application/zip' : 'application/gzip');
        expect(got.headers.get('content-disposition')).toBe(
          `attachment; filename="run-42.${format}"; filename*=UTF-8''run-42.${format}`,
        );
        expect(got.headers.get('x-content-type-options')).toBe('nosniff');
        if (format === 'zip') expect(got.headers.get('content-length')).toBe(String(got.body.length));
        const report = await openEverywhere(got.file, format, got.dir);
        const m = report.manifest;
        expect(m).toMatchObject({ manifest_version: 1, session_id: 'run-42', artifact_count: live.length });
        // Oldest first, each artifact once, with its record's fields.
        expect(m.entries.map((e: Rec) => e.artifact_id)).toEqual(live.map((a) => a.artifact_id));
        for (const [i, e] of m.entries.entries()) {
          const a = live[i] as Rec;
          expect(e).toEqual({
            path: e.path,
            artifact_id: a.artifact_id,
            filename: a.filename,
            content_type: a.content_type,
            size_bytes: a.size_bytes,
            sha256: a.content_hash,
            metadata: a.metadata,
            session_id: 'run-42',
            agent_id: a.agent_id,
            created_at: a.created_at,
            expires_at: a.expires_at,
          });
        }
        const names = m.entries.map((e: Rec) => e.path);
        // Collisions keep the first (oldest) plain and suffix the rest with the artifact id.
        const idOf = (filename: string, nth = 0) =>
          live.filter((a) => a.filename === filename)[nth]?.artifact_id as string;
        expect(names).toContain('Report.md');
        expect(names).toContain(`report.${idOf('report.md')}.md`);
        expect(names).toContain(`report.${idOf('report.md', 1)}.md`);
        expect(names).toContain(`manifest.${idOf('manifest.json')}.json`);
        expect(names).toContain(`MANIFEST.${idOf('MANIFEST.JSON')}.JSON`);
        expect(names).toContain('café.txt');
        expect(names).toContain(`café.${idOf('cafe\u0301.txt')}.txt`);
        expect(names).toContain('evilgpj.exe');
        expect(names).toContain('_CON');
        expect(names).toContain('_con.txt');
        expect(names).toContain('C_evil.txt');
        expect(names).toContain('bashrc');
        expect(names).not.toContain('deleted.txt');
        expect(names).not.toContain('expired.txt');
        // Each entry's time is its artifact's created_at (zip: DOS time in UTC here, tar: seconds).
        const first = live[0] as Rec;
        const t = report.times[names[0]];
        const created = new Date(first.created_at);
        if (format === 'zip') {
          expect(t.slice(0, 3)).toEqual([created.getFullYear(), created.getMonth() + 1, created.getDate()]);
        } else expect(t).toBe(Math.floor(created.getTime() / 1000));
      } finally {
        await rm(got.dir, { recursive: true, force: true });
      }
    }
  });

  it('a zip whose central directory passes 64 KiB announces its exact length', async () => {
    const key = await s.createTenant(`archive-wide-${backend.name}`, 'pro');
    const first = await put(s.apiUrl, key, 'shared bytes', { filename: 'seed.txt', session_id: 'wide-run' });
    const tenant = (await s.core.deps.tenantStore.getTenantByName(`archive-wide-${backend.name}`))!;
    const row = (await s.core.deps.artifactStore.getArtifact(tenant.id, first.artifact_id))!;
    // 800 more records of the same bytes, with long names: a central directory of about 90 KB.
    for (let i = 0; i < 800; i++) {
      await s.core.deps.artifactStore.insertArtifact({
        artifact: {
          ...row,
          id: newArtifactId(),
          filename: `${'long-name-'.repeat(6)}${i}.txt`,
          createdAt: row.createdAt + i + 1,
        },
        storageLimitBytes: Number.MAX_SAFE_INTEGER,
      });
    }
    const r = await archiveCall(s, key, '/v1/sessions/wide-run/archive');
    expect(r.json.artifact_count).toBe(801);
    const got = await download(r.json.archive_url);
    try {
      expect(got.headers.get('content-length')).toBe(String(got.body.length));
      const report = await openEverywhere(got.file, 'zip', got.dir);
      expect(report.names).toHaveLength(802);
    } finally {
      await rm(got.dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('an archive of any list filter: agent and metadata, in tar.gz', async () => {
    const key = await s.createTenant(`archive-filter-${backend.name}`, 'pro');
    const a = await put(s.apiUrl, key, 'A', { filename: 'a.md', agent_id: 'x', metadata: { kind: 'report' } });
    clock.advance(1000);
    await put(s.apiUrl, key, 'B', { filename: 'b.md', agent_id: 'x', metadata: { kind: 'draft' } });
    await put(s.apiUrl, key, 'C', { filename: 'c.md', agent_id: 'y', metadata: { kind: 'report' } });
    const r = await archiveCall(s, key, '/v1/artifacts/archive?agent_id=x&metadata.kind=report&format=tar.gz');
    expect(r.status, r.text).toBe(303);
    expect(r.json).toMatchObject({ artifact_count: 1, format: 'tar.gz' });
    expect(r.json.filename).toMatch(/^artifacts-\d{8}T\d{6}Z\.tar\.gz$/);
    const got = await download(r.json.archive_url);
    try {
      const report = await openEverywhere(got.file, 'tar.gz', got.dir);
      expect(report.manifest.filters).toEqual({ agent_id: 'x', 'metadata.kind': 'report' });
      expect(report.manifest.entries.map((e: Rec) => e.artifact_id)).toEqual([a.artifact_id]);
      expect(report.modes['a.md']).toBe(0o644);
    } finally {
      await rm(got.dir, { recursive: true, force: true });
    }
    // An empty match is an archive of the manifest alone.
    const none = await archiveCall(s, key, '/v1/artifacts/archive?agent_id=nobody');
    expect(none.json).toMatchObject({ artifact_count: 0, size_bytes: 0 });
    const empty = await download(none.json.archive_url);
    try {
      expect((await openEverywhere(empty.file, 'zip', empty.dir)).names).toEqual(['manifest.json']);
    } finally {
      await rm(empty.dir, { recursive: true, force: true });
    }
  });

  it('refuses bad input with the error envelope; another tenant’s session is not found; one counted request', async () => {
    const key = await s.createTenant(`archive-errors-${backend.name}`, 'pro');
    await put(s.apiUrl, key, 'mine', { filename: 'mine.txt', session_id: 'private-run' });
    expectError(await archiveCall(s, key, '/v1/sessions/no-such-run/archive'), 404, 'session_not_found');
    expectError(await archiveCall(s, key, '/v1/sessions/..%2F..%2Fetc/archive'), 404, 'session_not_found');
    expectError(await archiveCall(s, key, '/v1/sessions/private-run/archive?format=rar'), 400, 'invalid_request');
    expectError(await archiveCall(s, key, '/v1/sessions/private-run/archive?agent_id=x'), 400, 'invalid_request');
    expectError(await archiveCall(s, key, '/v1/artifacts/archive?limit=5'), 400, 'invalid_request');
    expectError(await archiveCall(s, key, '/v1/artifacts/archive?cursor=x'), 400, 'invalid_request');
    expectError(await archiveCall(s, key, '/v1/artifacts/archive?colour=red'), 400, 'invalid_request');
    expectError(await archiveCall(s, key, '/v1/artifacts/archive?session_id=..'), 400, 'invalid_request');
    expectError(await archiveCall(s, null, '/v1/sessions/private-run/archive'), 401, 'unauthorized');

    const stranger = await s.createTenant(`archive-stranger-${backend.name}`, 'pro');
    expectError(await archiveCall(s, stranger, '/v1/sessions/private-run/archive'), 404, 'session_not_found');
    // The stranger's list archive holds only the stranger's artifacts (none).
    const theirs = await archiveCall(s, stranger, '/v1/artifacts/archive?session_id=private-run');
    expect(theirs.json).toMatchObject({ artifact_count: 0 });

    await s.core.requests.flush();
    const before = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_requests_month;
    const r = await archiveCall(s, key, '/v1/sessions/private-run/archive');
    expect((await fetch(r.json.archive_url)).status).toBe(200);
    await s.core.requests.flush();
    const after = (await api(s.apiUrl, key, 'GET', '/v1/whoami')).json.usage_requests_month;
    expect(after - before).toBe(2); // the archive call and this whoami; fetching the URL counts none
  });

  it('the signed URL works for an hour, for its archive only, and not for a suspended tenant', async () => {
    const key = await s.createTenant(`archive-url-${backend.name}`, 'pro');
    await put(s.apiUrl, key, 'signed', { filename: 'signed.txt', session_id: 'signed-run' });
    const r = await archiveCall(s, key, '/v1/sessions/signed-run/archive');
    const url = new URL(r.json.archive_url);
    const [, , token] = url.pathname.split('/');
    // The token hides what it names: no tenant id, session or filter in clear.
    expect(url.pathname).not.toContain('signed-run/');
    expect(Buffer.from(token as string, 'base64url').toString('latin1')).not.toContain('signed-run');
    // Altered anywhere: a bare 404.
    const flipped = `${token?.slice(0, 20)}${token?.[20] === 'A' ? 'B' : 'A'}${token?.slice(21)}`;
    const bad = await fetch(`${url.origin}/z/${flipped}/signed-run.zip`);
    expect(bad.status).toBe(404);
    expect(((await bad.json()) as Rec).error.code).toBe('artifact_not_found');
    // The API origin serves no archive bytes.
    expect((await fetch(`${s.apiUrl}${url.pathname}`)).status).toBe(404);
    // Fresh content at fetch time: an artifact added after the call is in the archive.
    clock.advance(1000);
    await put(s.apiUrl, key, 'later', { filename: 'later.txt', session_id: 'signed-run' });
    const later = await download(url.href);
    try {
      expect((await openEverywhere(later.file, 'zip', later.dir)).names).toEqual([
        'manifest.json',
        'signed.txt',
        'later.txt',
      ]);
    } finally {
      await rm(later.dir, { recursive: true, force: true });
    }
    const tenant = (await s.core.deps.tenantStore.getTenantByName(`archive-url-${backend.name}`))!;
    await s.core.deps.tenantStore.updateTenant(tenant.id, { suspended: true });
    expect((await fetch(url.href)).status).toBe(404);
    await s.core.deps.tenantStore.updateTenant(tenant.id, { suspended: false });
    clock.advance(HOUR_MS);
    expect((await fetch(url.href)).status).toBe(404);
  });
});
