import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliRun, cliWorkspace, expectOk, hasScript, runCairn } from '../helpers/cli.js';
import { put, type Rec } from '../helpers/e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Stored data never drives the terminal: whatever a record holds (metadata, or a filename, session
 * or agent id stored before control characters were refused, or by another server), every human
 * output of the CLI shows control characters (C0, DEL, C1) and bidirectional controls as visible
 * escapes, piped or on a terminal, while `--json` stays exact JSON. The real `cairn` binary
 * against a real server; the stored names are put in its SQLite file directly, as old data.
 */

/** What a terminal would act on, line feeds aside (the CLI's own line breaks). */
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;
/** The metadata: an OSC 52 clipboard write, then a colour change. */
const OSC52 = '\u001b]52;c;cHduZWQ=\u0007\u001b[31mRED';
const HOSTILE = {
  model: OSC52,
  c1: 'x\u009b31my',
  bidi: 'abc\u202edcba\u2066z\u2069\u200e',
  lines: 'first\nID  art_FAKEFAKEFAKEFAKE\rsecond',
  del: 'a\u007fb',
};
const C1_NAME = '\u009b31mred\u0085.txt';

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
let env: Record<string, string>;
let withMeta: Rec;
let oldNames: Rec;

/** Names and labels the API refuses now, written into the stored row as an older server left them. */
function storeOldNames(id: string): void {
  const db = new Database(path.join(server.dataDir, 'cairn.sqlite'));
  try {
    db.prepare('UPDATE artifacts SET filename = ?, session_id = ?, agent_id = ? WHERE id = ?').run(
      C1_NAME,
      'old\u001b[2Jsession',
      'agent\u202egnp.exe',
      id,
    );
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
  env = { CAIRN_API_KEY: server.apiKey };
  withMeta = await put(server.apiUrl, server.apiKey, 'metadata', { filename: 'meta.txt', metadata: HOSTILE });
  // Above the progress bar's 4 MB, for the terminal case.
  oldNames = await put(server.apiUrl, server.apiKey, randomBytes(5_000_000).toString('base64'), {
    filename: 'plain.txt',
    session_id: 'plain',
  });
  storeOldNames(oldNames.artifact_id);
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

/** No raw control anywhere in a run's output, stdout and stderr alike. */
function expectNoRawControls(r: CliRun): void {
  const out = r.stdout + r.stderr;
  const found = RAW_CONTROL.exec(out);
  expect(found, found ? `raw U+${found[0].codePointAt(0)?.toString(16)} in ${JSON.stringify(out)}` : '').toBeNull();
}

describe('piped', { timeout: 120_000 }, () => {
  it('cairn get shows every control in metadata as an escape', async () => {
    const r = expectOk(await ws.run(['get', withMeta.artifact_id], env));
    expectNoRawControls(r);
    expect(r.stdout).toContain('model=\\u001b]52;c;cHduZWQ=\\u0007\\u001b[31mRED');
    expect(r.stdout).toContain('c1=x\\u009b31my');
    expect(r.stdout).toContain('bidi=abc\\u202edcba\\u2066z\\u2069\\u200e');
    // A line feed in a value cannot start a line of its own.
    expect(r.stdout).toContain('lines=first\\nID  art_FAKEFAKEFAKEFAKE\\rsecond');
    expect(r.stdout).not.toMatch(/^ID {2}art_FAKE/m);
    expect(r.stdout).toContain('del=a\\u007fb');
  });

  it('cairn ls and cairn get show old names, sessions and agents with C1 and bidi controls escaped', async () => {
    const listed = expectOk(await ws.run(['ls'], env));
    expectNoRawControls(listed);
    expect(listed.stdout).toContain('\\u009b31mred\\u0085.txt');
    expect(listed.stdout).toContain('old\\u001b[2Jsession');
    expect(listed.stdout).toContain('agent\\u202egnp.exe');
    // The columns still line up, measured on the escaped names.
    const [header = '', newest = '', older = ''] = listed.stdout.trimEnd().split('\n');
    expect(newest.indexOf('\\u009b31mred')).toBe(header.indexOf('NAME'));
    expect(older.indexOf('meta.txt')).toBe(header.indexOf('NAME'));
    expect(newest.indexOf('old\\u001b')).toBe(header.indexOf('SESSION'));
    const got = expectOk(await ws.run(['get', oldNames.artifact_id], env));
    expectNoRawControls(got);
    expect(got.stdout).toMatch(/^Name +\\u009b31mred\\u0085\.txt$/m);
  });

  it('--json stays exact JSON with the same values, and carries no raw control either', async () => {
    const r = expectOk(await ws.run(['get', withMeta.artifact_id, '--json'], env));
    expectNoRawControls(r);
    expect(JSON.parse(r.stdout).metadata).toEqual(HOSTILE);
    const listed = expectOk(await ws.run(['ls', '--json'], env));
    expectNoRawControls(listed);
    const names = JSON.parse(listed.stdout).artifacts.map((a: Rec) => a.filename);
    expect(names).toContain(C1_NAME);
  });

  it('errors: a local usage error quoting a stored name, and commander echoing an argument', async () => {
    const out = path.join(ws.work, 'out');
    await mkdir(out, { recursive: true });
    // A download is saved under the stored name without its control characters (safeFilename).
    await writeFile(path.join(out, '31mred.txt'), 'already here');
    const exists = await ws.run(['download', oldNames.artifact_id, '-o', out], env);
    expect(exists.code).toBe(2);
    expectNoRawControls(exists);
    expect(exists.stderr).toContain(`${path.join(out, '31mred.txt')} already exists`);
    const badMeta = await ws.run(['ls', '--meta', '\u001b]0;pwned\u0007=v'], env);
    expect(badMeta.code).toBe(2);
    expectNoRawControls(badMeta);
    expect(badMeta.stderr).toContain('\\u001b]0;pwned\\u0007');
  });

  it('errors: an API error message with escape sequences (from a server or anything in between)', async () => {
    const hostile = http.createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { code: 'invalid_request', message: `bad ${OSC52}\nforged line`, status: 400 } }),
      );
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
      const r = await ws.run(['ls', '--api-url', url], env);
      expect(r.code).toBe(1);
      expectNoRawControls(r);
      expect(r.stderr).toBe('error: invalid_request: bad \\u001b]52;c;cHduZWQ=\\u0007\\u001b[31mRED\\nforged line\n');
    } finally {
      await new Promise<void>((resolve) => hostile.close(() => resolve()));
    }
  });
});

describe('admin output', { timeout: 120_000 }, () => {
  it('cairn admin shows a stored tenant name with controls escaped, in tables, messages and errors', async () => {
    await server.createTenant('renamed', 'free');
    const db = new Database(path.join(server.dataDir, 'cairn.sqlite'));
    try {
      db.prepare('UPDATE tenants SET name = ? WHERE name = ?').run('evil\u009b31m\u001b]2;title\u0007', 'renamed');
    } finally {
      db.close();
    }
    const admin = (args: string[]) => ws.run(['admin', '--data', server.dataDir, ...args], env);
    const listed = expectOk(await admin(['tenant', 'list']));
    expectNoRawControls(listed);
    expect(listed.stdout).toContain('evil\\u009b31m\\u001b]2;title\\u0007');
    const json = expectOk(await admin(['tenant', 'list', '--json']));
    expectNoRawControls(json);
    expect(JSON.parse(json.stdout).map((t: Rec) => t.tenant_name)).toContain('evil\u009b31m\u001b]2;title\u0007');
    const planned = expectOk(await admin(['tenant', 'set-plan', 'evil\u009b31m\u001b]2;title\u0007', 'pro']));
    expectNoRawControls(planned);
    expect(planned.stdout).toContain('Tenant evil\\u009b31m\\u001b]2;title\\u0007 is now on the pro plan.');
    const missing = await admin(['tenant', 'suspend', 'nobody\u001b[5m']);
    expect(missing.code).toBe(1);
    expectNoRawControls(missing);
    expect(missing.stderr).toContain("No tenant named 'nobody\\u001b[5m'");
  });
});

describe.skipIf(!hasScript)('on a terminal', { timeout: 120_000 }, () => {
  const onTerminal = (args: string[]) =>
    runCairn(args, { cwd: ws.work, configDir: ws.configDir, apiUrl: server.apiUrl, env, terminal: {} });

  /** ESC only as the CLI's own colour (SGR) and progress-bar sequences. */
  const ownSequencesOnly = (text: string) => text.replace(/\u001b\[(?:\d+m|K|2K)/g, '');

  it('colour stays, the data’s own sequences are escaped', async () => {
    const listed = expectOk(await onTerminal(['ls']));
    expect(listed.stdout).toContain('\u001b[36mart_');
    expect(ownSequencesOnly(listed.stdout).replaceAll('\r\n', '\n')).not.toMatch(RAW_CONTROL);
    expect(listed.stdout).toContain('\\u009b31mred\\u0085.txt');
    const got = expectOk(await onTerminal(['get', withMeta.artifact_id]));
    expect(got.stdout).toContain('\u001b[36mart_');
    expect(ownSequencesOnly(got.stdout).replaceAll('\r\n', '\n')).not.toMatch(RAW_CONTROL);
    expect(got.stdout).toContain('\\u001b]52;c;cHduZWQ=\\u0007\\u001b[31mRED');
  });

  it('the progress bar and the last line show a stored name escaped', async () => {
    const dir = path.join(ws.work, 'tty-dir');
    await mkdir(dir, { recursive: true });
    const r = expectOk(await onTerminal(['download', oldNames.artifact_id, '-o', dir]));
    // Saved (and shown) under the stored name without its control characters.
    expect(r.stdout).toMatch(/download 31mred\.txt \[#+\]/);
    expect(r.stdout).toContain(path.join(dir, '31mred.txt'));
    expect(ownSequencesOnly(r.stdout).replaceAll('\r', '')).not.toMatch(RAW_CONTROL);
  });
});
