import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, hasScript, okJson, runCairn } from '../helpers/cli.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The CLI in an 80-column terminal (a pseudo-terminal from util-linux `script`, sized with stty,
 * as an 80-column tmux pane is): tables fit by cutting or moving cells, never by the terminal
 * wrapping whole lines; help and push lines fit; a big file shows that it is being hashed.
 */

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;

/** `cairn …` on a terminal `columns` wide, without colour (so lengths are the text's). */
const at = (columns: number, args: string[]) =>
  runCairn(args, {
    cwd: ws.work,
    configDir: ws.configDir,
    apiUrl: server.apiUrl,
    env: { CAIRN_API_KEY: server.apiKey, NO_COLOR: '1' },
    terminal: { columns },
  });

/** The lines a terminal shows: redraws (\r) resolved to what stays, erase-line codes dropped. */
const screenLines = (out: string) =>
  out
    .replace(/\u001b\[[0-9;]*K/g, '')
    .split('\r\n')
    .map((l) => l.split('\r').at(-1) ?? '')
    .filter((l) => l !== '');

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

describe.skipIf(!hasScript)('80 columns', { timeout: 120_000 }, () => {
  it('ls: rows with a long name, application/octet-stream and labels fit, one line per artifact', async () => {
    const name = 'quarterly-pricing-analysis-with-all-the-regional-breakdowns.bin';
    for (let i = 0; i < 3; i++) {
      const file = await ws.file(`w${i}-${name}`, randomBytes(2000 + i));
      expectOk(
        await at(200, ['push', file, '--session', 'a-rather-long-session-label', '--agent', 'researcher-agent']),
      );
    }
    const r = expectOk(await at(80, ['ls', '--session', 'a-rather-long-session-label']));
    const lines = screenLines(r.stdout);
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^ID\s+NAME\s+TYPE\s+SIZE\s+CREATED\s+SESSION/);
    for (const row of lines.slice(1)) {
      expect(row).toMatch(/^art_\w{16} {2}w\d-quart\S*…/);
      expect(row).toMatch(/ applicati\S*… /);
    }
    // Wide enough, nothing is cut.
    const wide = screenLines(expectOk(await at(220, ['ls', '--session', 'a-rather-long-session-label'])).stdout);
    expect(wide[1]).toContain('application/octet-stream');
    expect(wide[1]).toContain('researcher-agent');
    // Into a pipe, whatever the terminal, nothing is cut either.
    const piped = expectOk(
      await ws.run(['ls', '--session', 'a-rather-long-session-label'], { CAIRN_API_KEY: server.apiKey }),
    );
    expect(piped.stdout).toContain('a-rather-long-session-label');
  });

  it('links: the URL goes whole onto a line of its own under its row', async () => {
    const file = await ws.file('shared.txt', 'share me');
    const id = okJson(await at(200, ['push', file, '--json'])).artifact_id as string;
    const link = await api(server.apiUrl, server.apiKey, 'POST', `/v1/artifacts/${id}/links`, {});
    const lines = screenLines(expectOk(await at(80, ['links', id])).stdout);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^ID\s+CREATED\s+EXPIRES$/);
    expect(lines[1]).toMatch(new RegExp(`^${link.json.link_id} +just now +in 7 d$`));
    expect(lines[2]).toBe(`  ${link.json.url}`);
    // Where it fits, the URL is a column again.
    expect(screenLines(expectOk(await at(200, ['links', id])).stdout)[0]).toMatch(/EXPIRES\s+URL$/);
  });

  it('push: the lines of several files are aligned and fit; a big file shows it is hashed first', async () => {
    const a = await ws.file('a.md', '# a');
    const b = await ws.file('a-much-longer-name-for-the-second-file.json', '{"b":1}');
    const big = await ws.file('big.bin', randomBytes(6_000_000));
    const r = expectOk(await at(80, ['push', a, b, big, '--session', 'aligned']));
    expect(r.stdout).toMatch(/hashing big\.bin \[[#-]+\]/);
    const rows = screenLines(r.stdout).filter((l) => l.startsWith('art_'));
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.length, row).toBeLessThanOrEqual(80);
    // The size column ends at the same place in every line.
    const sizeEnds = rows
      .map((row) => /\d(?:\.\d)? (?:B|KB|MB)(?= )/.exec(row))
      .map((m) => (m?.index ?? 0) + (m?.[0].length ?? 0));
    expect(new Set(sizeEnds).size, rows.join('\n')).toBe(1);
  });

  it('help on an 80-column terminal: no line wider', async () => {
    for (const columns of [80]) {
      for (const args of [['push', '--help'], ['publish', '--help'], ['--help'], ['mcp', '--help']]) {
        const lines = screenLines(expectOk(await at(columns, args)).stdout);
        for (const line of lines)
          expect(line.length, `${columns}: ${args.join(' ')}: ${line}`).toBeLessThanOrEqual(columns);
      }
    }
  });
});
