import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, okJson } from '../helpers/cli.js';
import type { Rec } from '../helpers/e2e.js';
import { runCommand } from '../helpers/process.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * `cairn capture gemini` with the real binary (dist/). Both fixtures were written by Gemini CLI
 * 0.61.0 itself: the chat log of a session of two turns (answered by a stand-in Gemini API on
 * loopback, `GOOGLE_GEMINI_BASE_URL`; the second turn resumed with `-m gemini-3.7-pro`), and the
 * input its SessionEnd hook received when that session ended.
 */

const fixture = (name: string) => readFile(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const SESSION = 'e9f74f41-e56b-4bff-8430-2c72e0865bc9';

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
let home: string;

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
  home = path.join(ws.work, 'home');
  await mkdir(home, { recursive: true });
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

const env = () => ({ CAIRN_API_KEY: server.apiKey, HOME: home });
const cairn = (args: string[]) => ws.run(args, env());
const transcripts = async (): Promise<Rec[]> =>
  (await api(server.apiUrl, server.apiKey, 'GET', `/v1/artifacts?session_id=${SESSION}&transcript=true`)).json
    .artifacts;

const MODELS = { model: 'gemini-3.7-pro', model_source: 'transcript', models_used: 'gemini-3.7-pro,gemini-3.8-flash' };

describe('cairn capture gemini', { timeout: 60_000 }, () => {
  it("--snapshot of this folder's newest chat log: the last answer's model, every model sorted", async () => {
    // Where Gemini CLI keeps it: ~/.gemini/projects.json names the folder's project.
    const chats = path.join(home, '.gemini', 'tmp', 'work', 'chats');
    await mkdir(chats, { recursive: true });
    await writeFile(path.join(home, '.gemini', 'projects.json'), JSON.stringify({ projects: { [ws.work]: 'work' } }));
    await writeFile(path.join(chats, 'session-2026-12-02T02-41-e9f74f41.jsonl'), await fixture('gemini-chat.jsonl'));
    const rec = okJson(await cairn(['capture', 'gemini', '--snapshot', '--json']));
    expect(rec).toMatchObject({
      filename: `gemini-${SESSION}.jsonl`,
      session_id: SESSION,
      agent_id: 'gemini-cli',
      content_type: 'application/x-ndjson',
    });
    expect(rec.metadata).toEqual({ type: 'transcript', capture: 'snapshot', ...MODELS });
  });

  it('--install adds a SessionEnd hook that stores the ending session once, and --uninstall takes it out', async () => {
    const settings = path.join(home, '.gemini', 'settings.json');
    const mine = {
      ui: { theme: 'Default' },
      hooks: { BeforeTool: [{ hooks: [{ type: 'command', command: 'true' }] }] },
    };
    await writeFile(settings, JSON.stringify(mine));
    expectOk(await cairn(['capture', 'gemini', '--install']));
    const installed = JSON.parse(await readFile(settings, 'utf8'));
    expect(installed.ui).toEqual(mine.ui);
    expect(installed.hooks.BeforeTool).toEqual(mine.hooks.BeforeTool);
    const [group, ...more] = installed.hooks.SessionEnd;
    expect(more).toEqual([]);
    const command: string = group.hooks[0].command;
    expect(command).toMatch(/ capture gemini --from-hook end$/);
    expect(expectOk(await cairn(['capture', 'gemini', '--install'])).stdout).toContain('already in');

    // The input Gemini CLI gave its SessionEnd hook, pointing at a copy of that session's log.
    const log = await ws.file('chats/session.jsonl', await fixture('gemini-chat.jsonl'));
    const input = JSON.stringify({
      ...JSON.parse(await fixture('gemini-session-end-input.json')),
      transcript_path: log,
    });
    for (let i = 0; i < 2; i++) {
      const ran = await runCommand('sh', ['-c', command], {
        cwd: ws.work,
        env: {
          ...(process.env as Record<string, string>),
          ...env(),
          CAIRN_CONFIG_DIR: ws.configDir,
          CAIRN_API_URL: server.apiUrl,
        },
        input,
      });
      expect(ran.code, ran.stderr).toBe(0);
    }
    const ended = (await transcripts()).filter((a) => a.metadata.capture === 'end');
    expect(ended).toHaveLength(1);
    expect(ended[0]?.metadata).toEqual({ type: 'transcript', capture: 'end', ...MODELS });

    expectOk(await cairn(['capture', 'gemini', '--uninstall']));
    expect(JSON.parse(await readFile(settings, 'utf8'))).toEqual(mine);
  });

  it('says what is wrong, exit 2: no chat log here, two modes, a hook input without a session', async () => {
    const none = await ws.run(['capture', 'gemini', '--snapshot'], { ...env(), HOME: path.join(ws.work, 'nobody') });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no Gemini CLI chat log for this folder');
    const two = await cairn(['capture', 'gemini', '--install', '--snapshot']);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('exactly one of');
    const bad = await ws.run(['capture', 'gemini', '--from-hook', 'end'], env(), '{"hook_event_name":"SessionEnd"}');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('no session_id or transcript_path');
  });
});
