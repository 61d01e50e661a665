import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, hasScript, okJson, runCairn } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Colour and progress bars appear only where a person looks: on a terminal (a real pseudo-terminal
 * from util-linux `script`), never in piped or redirected output, and colour never with NO_COLOR.
 */

/** An SGR colour/style sequence such as ESC[1m. */
const SGR = /\u001b\[\d+m/;
/** The finished progress bar of a transfer of `name`, as the last redraw leaves it. */
const finishedBar = (verb: string, name: string) =>
  new RegExp(`${verb} ${name.replace('.', '\\.')} \\[#+\\]\\s+100%\\s+6\\.0 MB/6\\.0 MB\\s+\\S+ \\S+/s\\s+ETA 0:00`);

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
let big: string;
const env = () => ({ CAIRN_API_KEY: server.apiKey });

/** `cairn …` on a terminal; `stdoutTo` sends stdout to a file instead (stderr stays on the terminal). */
const onTerminal = (args: string[], extra: Record<string, string> = {}, stdoutTo?: string) =>
  runCairn(args, {
    cwd: ws.work,
    configDir: ws.configDir,
    apiUrl: server.apiUrl,
    env: { ...env(), ...extra },
    terminal: stdoutTo === undefined ? {} : { stdoutTo },
  });

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
  // Above the 4 MB threshold of the progress bar.
  big = await ws.file('big.bin', randomBytes(6_000_000));
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

describe.skipIf(!hasScript)('on a terminal', { timeout: 120_000 }, () => {
  it('tables are coloured and uploads and downloads draw a progress bar with rate and ETA', async () => {
    const pushed = expectOk(await onTerminal(['push', big, '--session', 'tty']));
    expect(pushed.stdout).toMatch(finishedBar('push', 'big.bin'));
    expect(pushed.stdout).toMatch(/\r\n\u001b\[36mart_\w{16}\u001b\[39m {2}big\.bin +6\.0 MB/);

    const listed = expectOk(await onTerminal(['ls', '--session', 'tty']));
    expect(listed.stdout).toMatch(/\u001b\[1mID +\u001b\[22m/);
    expect(listed.stdout).toContain('\u001b[36mart_');

    const saved = expectOk(await onTerminal(['download', listed.stdout.match(/art_\w{16}/)![0], '-o', 'copy.bin']));
    expect(saved.stdout).toMatch(finishedBar('download', 'copy.bin'));
    expect(saved.stdout).toContain('Saved \u001b[1mcopy.bin\u001b[22m (6.0 MB).');
  });

  it('NO_COLOR turns colour off (the bar stays: it is not colour)', async () => {
    const listed = expectOk(await onTerminal(['ls', '--session', 'tty'], { NO_COLOR: '1' }));
    expect(listed.stdout).toMatch(/^ID +NAME/m);
    expect(listed.stdout).not.toMatch(SGR);
    const pushed = expectOk(await onTerminal(['push', big, '--session', 'tty-nc'], { NO_COLOR: '1' }));
    expect(pushed.stdout).toMatch(finishedBar('push', 'big.bin'));
    expect(pushed.stdout).not.toMatch(SGR);
  });

  it('stdout redirected to a file: plain there, while the bar still shows on the terminal (stderr)', async () => {
    const out = path.join(ws.work, 'redirected.json');
    const run = expectOk(await onTerminal(['push', big, '--session', 'tty-file', '--json'], {}, out));
    expect(run.stdout).toMatch(finishedBar('push', 'big.bin'));
    const text = await readFile(out, 'utf8');
    expect(text).not.toContain('\u001b');
    expect(JSON.parse(text)).toMatchObject({ filename: 'big.bin', size_bytes: 6_000_000 });
    const table = path.join(ws.work, 'table.txt');
    expectOk(await onTerminal(['ls', '--session', 'tty-file'], {}, table));
    expect(await readFile(table, 'utf8')).toMatch(/^ID +NAME +TYPE/);
    expect(await readFile(table, 'utf8')).not.toContain('\u001b');
  });
});

describe('piped', { timeout: 120_000 }, () => {
  it('no colour, no bar, no escape sequence at all on stdout or stderr', async () => {
    const pushed = expectOk(await ws.run(['push', big, '--session', 'piped'], env()));
    const listed = expectOk(await ws.run(['ls', '--session', 'piped'], env()));
    const id = okJson(await ws.run(['ls', '--session', 'piped', '--json'], env())).artifacts[0].artifact_id;
    const saved = expectOk(await ws.run(['download', id, '-o', 'piped.bin'], env()));
    for (const r of [pushed, listed, saved]) {
      expect(r.stdout + r.stderr).not.toContain('\u001b');
      expect(r.stdout + r.stderr).not.toContain('\r');
    }
    expect(pushed.stderr).toBe('');
    expect(saved.stdout).toBe('Saved piped.bin (6.0 MB).\n');
  });
});
