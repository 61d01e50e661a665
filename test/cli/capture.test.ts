import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliWorkspace, expectOk, okJson } from '../helpers/cli.js';
import type { Rec } from '../helpers/e2e.js';
import { runCommand } from '../helpers/process.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * Transcript capture with the real `cairn` binary (dist/): models read by `push --transcript`,
 * and `cairn capture claude-code` (--install, --uninstall, the hook it installs, --snapshot) on a
 * fixture transcript and a temporary Claude Code folder. The real home is never touched.
 */

let server: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
let claude: string;

const fixtureText = (name: string) => readFile(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
const env = () => ({ CAIRN_API_KEY: server.apiKey, CLAUDE_CONFIG_DIR: claude, HOME: ws.work });
const cairn = (args: string[], input?: string) => ws.run(args, env(), input);
const settingsFile = () => path.join(claude, 'settings.json');
const metadataOf = async (id: string) =>
  (await api(server.apiUrl, server.apiKey, 'GET', `/v1/artifacts/${id}`)).json.metadata as Rec;

beforeAll(async () => {
  server = await startTestServer();
  ws = await cliWorkspace(server.apiUrl);
  claude = await mkdtemp(path.join(ws.work, 'claude-'));
});
afterAll(async () => {
  await server?.close();
  await ws?.remove();
});

describe('push --transcript reads the models', { timeout: 120_000 }, () => {
  it('Claude Code JSONL: model (last), model_source=transcript, models_used sorted', async () => {
    const file = await ws.file('t/session.jsonl', await fixtureText('claude-code-session.jsonl'));
    const rec = okJson(await cairn(['push', file, '--transcript', '--json']));
    expect(rec.metadata).toEqual({
      type: 'transcript',
      model: 'claude-sonnet-4-5-20250929',
      model_source: 'transcript',
      models_used: 'claude-opus-4-1-20250805,claude-sonnet-4-5-20250929',
    });
    expect(rec.content_type).toBe('application/x-ndjson');
  });

  it('OpenAI-shaped messages too; a declared model wins and is not marked as captured', async () => {
    const file = await ws.file('t/chat.jsonl', await fixtureText('openai-chat.jsonl'));
    const read = okJson(await cairn(['push', file, '--transcript', '--json']));
    expect(read.metadata).toMatchObject({
      model: 'gpt-5',
      model_source: 'transcript',
      models_used: 'gpt-5,gpt-5-mini',
    });

    const declared = okJson(await cairn(['push', file, '--transcript', '--meta', 'model=my-agent-v2', '--json']));
    expect(declared.metadata).toEqual({ type: 'transcript', model: 'my-agent-v2', models_used: 'gpt-5,gpt-5-mini' });
    const own = okJson(
      await cairn(['push', file, '--transcript', '--meta', 'models_used=x', '--meta', 'model_source=manual', '--json']),
    );
    expect(own.metadata).toEqual({ type: 'transcript', model: 'gpt-5', model_source: 'manual', models_used: 'x' });
  });

  it('an unrecognised file or a push without --transcript gets no model keys', async () => {
    const other = await ws.file('t/events.ndjson', '{"event":"start","model":"not-a-turn"}\nplain text\n');
    expect(okJson(await cairn(['push', other, '--transcript', '--json'])).metadata).toEqual({ type: 'transcript' });
    const plain = await ws.file('t/plain.jsonl', await fixtureText('claude-code-session.jsonl'));
    expect(okJson(await cairn(['push', plain, '--json'])).metadata).toEqual({});
  });
});

/** Runs a hook command the way Claude Code does: through a shell, the hook input on stdin. */
function runHook(command: string, input: unknown): Promise<{ code: number; stdout: string; stderr: string }> {
  const hookEnv = { ...(process.env as Record<string, string>), ...env(), CAIRN_CONFIG_DIR: ws.configDir };
  return runCommand('sh', ['-c', command], {
    cwd: ws.work,
    env: { ...hookEnv, CAIRN_API_URL: server.apiUrl },
    input: JSON.stringify(input),
  });
}

const USER_SETTINGS = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test:*)'], deny: [] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre' }] }],
    SessionEnd: [{ hooks: [{ type: 'command', command: 'echo bye >> ~/ends.log' }] }],
  },
  env: { FOO: 'bar' },
};

describe('cairn capture claude-code', { timeout: 120_000 }, () => {
  it('--install merges a SessionEnd hook, keeps every key and a backup, and is idempotent', async () => {
    const original = `${JSON.stringify(USER_SETTINGS, null, 4)}\n`;
    await writeFile(settingsFile(), original, { mode: 0o640 });
    const first = expectOk(await cairn(['capture', 'claude-code', '--install']));
    expect(first.stdout).toContain(`Added a SessionEnd hook to ${settingsFile()}`);
    expect(first.stderr).toContain('does not redact secrets');
    expect(await readFile(`${settingsFile()}.cairn-backup`, 'utf8')).toBe(original);
    expect((await stat(settingsFile())).mode & 0o777).toBe(0o640);

    const merged = JSON.parse(await readFile(settingsFile(), 'utf8'));
    expect(Object.keys(merged)).toEqual(Object.keys(USER_SETTINGS));
    expect({ ...merged, hooks: undefined }).toEqual({ ...USER_SETTINGS, hooks: undefined });
    expect(merged.hooks.PreToolUse).toEqual(USER_SETTINGS.hooks.PreToolUse);
    expect(merged.hooks.SessionEnd).toHaveLength(2);
    expect(merged.hooks.SessionEnd[0]).toEqual(USER_SETTINGS.hooks.SessionEnd[0]);
    const ours = merged.hooks.SessionEnd[1];
    expect(ours.hooks).toHaveLength(1);
    expect(ours.hooks[0].type).toBe('command');
    expect(ours.hooks[0].command).toMatch(/ capture claude-code --from-hook end$/);

    const installed = await readFile(settingsFile(), 'utf8');
    const again = expectOk(await cairn(['capture', 'claude-code', '--install']));
    expect(again.stdout).toContain('already in');
    expect(await readFile(settingsFile(), 'utf8')).toBe(installed);

    // --uninstall takes out exactly what --install put in.
    const removed = expectOk(await cairn(['capture', 'claude-code', '--uninstall']));
    expect(removed.stdout).toContain('Removed the Cairn SessionEnd hook');
    expect(JSON.parse(await readFile(settingsFile(), 'utf8'))).toEqual(USER_SETTINGS);
    expect(JSON.stringify(JSON.parse(await readFile(settingsFile(), 'utf8')))).toBe(JSON.stringify(USER_SETTINGS));
    expect(expectOk(await cairn(['capture', 'claude-code', '--uninstall'])).stdout).toContain('nothing to remove');
    expect(okJson(await cairn(['capture', 'claude-code', '--install', '--json']))).toEqual({
      settings: settingsFile(),
      installed: true,
      changed: true,
    });
    expect(okJson(await cairn(['capture', 'claude-code', '--install', '--json'])).changed).toBe(false);
    expect(okJson(await cairn(['capture', 'claude-code', '--uninstall', '--json']))).toEqual({
      settings: settingsFile(),
      installed: false,
      changed: true,
    });
    expect(JSON.parse(await readFile(settingsFile(), 'utf8'))).toEqual(USER_SETTINGS);
  });

  it('creates what is missing and removes only that: no file, no hooks, an empty SessionEnd the user had', async () => {
    const dir = await mkdtemp(path.join(ws.work, 'settings-'));
    const fresh = path.join(dir, 'settings.json');
    expectOk(await cairn(['capture', 'claude-code', '--install', '--settings', fresh]));
    expect(Object.keys(JSON.parse(await readFile(fresh, 'utf8')))).toEqual(['hooks']);
    expectOk(await cairn(['capture', 'claude-code', '--uninstall', '--settings', fresh]));
    await expect(stat(fresh)).rejects.toThrow(/ENOENT/);

    const mine = path.join(dir, 'mine.json');
    const before = { theme: 'dark', hooks: { SessionEnd: [] } };
    await writeFile(mine, JSON.stringify(before));
    expectOk(await cairn(['capture', 'claude-code', '--install', '--settings', mine]));
    expectOk(await cairn(['capture', 'claude-code', '--uninstall', '--settings', mine]));
    expect(JSON.parse(await readFile(mine, 'utf8'))).toEqual(before);

    const noHooks = path.join(dir, 'no-hooks.json');
    await writeFile(noHooks, JSON.stringify({ theme: 'light' }));
    expectOk(await cairn(['capture', 'claude-code', '--install', '--settings', noHooks]));
    expectOk(await cairn(['capture', 'claude-code', '--uninstall', '--settings', noHooks]));
    expect(JSON.parse(await readFile(noHooks, 'utf8'))).toEqual({ theme: 'light' });
  });

  it('refuses a settings file it cannot merge into, and changes nothing', async () => {
    const dir = await mkdtemp(path.join(ws.work, 'bad-'));
    const cases: [string, string, RegExp][] = [
      ['broken.json', '{"model": "opus",', /not valid JSON/],
      ['array.json', '[1]', /does not hold a JSON object/],
      ['hooks.json', '{"hooks": []}', /"hooks" .* is not an object/],
      ['list.json', '{"hooks": {"SessionEnd": {}}}', /"hooks.SessionEnd" .* is not a list/],
    ];
    for (const [name, text, message] of cases) {
      const file = path.join(dir, name);
      await writeFile(file, text);
      const r = await cairn(['capture', 'claude-code', '--install', '--settings', file]);
      expect(r.code, name).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(await readFile(file, 'utf8')).toBe(text);
      await expect(stat(`${file}.cairn-backup`)).rejects.toThrow(/ENOENT/);
    }
    expect((await cairn(['capture', 'claude-code'])).code).toBe(2);
    expect((await cairn(['capture', 'claude-code', '--install', '--snapshot'])).code).toBe(2);
  });

  it('the installed hook pushes the ending session (capture=end) once, however often it fires', async () => {
    await writeFile(settingsFile(), '{}');
    expectOk(await cairn(['capture', 'claude-code', '--install']));
    const command = JSON.parse(await readFile(settingsFile(), 'utf8')).hooks.SessionEnd[0].hooks[0].command as string;
    const sessionId = '3f1c9a2e-5b7d-4e1a-9c0b-2d6f8e4a1b3c';
    const transcript = await ws.file('hook/session.jsonl', await fixtureText('claude-code-session.jsonl'));
    const input = {
      session_id: sessionId,
      transcript_path: transcript,
      cwd: ws.work,
      hook_event_name: 'SessionEnd',
      reason: 'exit',
    };
    const first = await runHook(command, input);
    expect(first.code, first.stderr).toBe(0);
    expect((await runHook(command, input)).code).toBe(0);

    const list = await api(server.apiUrl, server.apiKey, 'GET', `/v1/artifacts?session_id=${sessionId}`);
    expect(list.json.artifacts).toHaveLength(1);
    const art = list.json.artifacts[0] as Rec;
    expect(art).toMatchObject({
      filename: `claude-code-${sessionId}.jsonl`,
      session_id: sessionId,
      agent_id: 'claude-code',
      content_type: 'application/x-ndjson',
    });
    expect(await metadataOf(art.artifact_id)).toEqual({
      type: 'transcript',
      capture: 'end',
      model: 'claude-sonnet-4-5-20250929',
      model_source: 'transcript',
      models_used: 'claude-opus-4-1-20250805,claude-sonnet-4-5-20250929',
    });
    // The hosted service's hook rule: the last main-loop model, though the last assistant record is a subagent's.
    const subSession = '5d2e8c1a-7b3f-4a9e-8c6d-1f0e2a3b4c5d';
    const subFile = await ws.file('hook/sub.jsonl', await fixtureText('claude-code-subagent-last.jsonl'));
    const sub = await runHook(command, { ...input, session_id: subSession, transcript_path: subFile });
    expect(sub.code, sub.stderr).toBe(0);
    const subList = await api(server.apiUrl, server.apiKey, 'GET', `/v1/artifacts?session_id=${subSession}`);
    expect(await metadataOf((subList.json.artifacts[0] as Rec).artifact_id)).toEqual({
      type: 'transcript',
      capture: 'end',
      model: 'claude-opus-4-5-20251101',
      model_source: 'transcript',
      models_used: 'claude-haiku-4-5-20251001,claude-opus-4-5-20251101',
    });
    const bad = await runHook(command, { hook_event_name: 'SessionEnd' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/no session_id or transcript_path/);
    expectOk(await cairn(['capture', 'claude-code', '--uninstall']));
  });

  it('--snapshot pushes the session the host names, the one named, or the only one; never a guess among several', async () => {
    const folder = path.join(claude, 'projects', ws.work.replace(/[^A-Za-z0-9]/g, '-'));
    await mkdir(folder, { recursive: true });
    const text = await fixtureText('openai-chat.jsonl');
    const older = path.join(folder, 'aaaaaaaa-0000-0000-0000-000000000001.jsonl');
    const newer = path.join(folder, 'aaaaaaaa-0000-0000-0000-000000000002.jsonl');
    await writeFile(older, text);
    await new Promise((r) => setTimeout(r, 20));
    await writeFile(newer, `${text}\n`);

    // Two sessions in this folder and nothing naming this one: refused, with how to name it.
    const guess = await cairn(['capture', 'claude-code', '--snapshot', '--json']);
    expect(guess.code, guess.stderr).toBe(2);
    expect(guess.stderr).toMatch(/2 Claude Code sessions have transcripts for this folder/);
    expect(guess.stderr).toMatch(/--session-id/);
    expect(guess.stderr).toContain('aaaaaaaa-0000-0000-0000-000000000002');
    expect(guess.stderr).toContain('aaaaaaaa-0000-0000-0000-000000000001');

    // The host names the session (the older one, while the newer is another session still writing).
    const hosted = okJson(
      await ws.run(['capture', 'claude-code', '--snapshot', '--json'], {
        ...env(),
        CLAUDE_SESSION_ID: 'aaaaaaaa-0000-0000-0000-000000000001',
      }),
    );
    expect(hosted.session_id).toBe('aaaaaaaa-0000-0000-0000-000000000001');
    expect(hosted.metadata).toMatchObject({ type: 'transcript', capture: 'snapshot', model: 'gpt-5' });

    const named = okJson(
      await cairn([
        'capture',
        'claude-code',
        '--snapshot',
        '--session-id',
        'aaaaaaaa-0000-0000-0000-000000000002',
        '--json',
      ]),
    );
    expect(named.session_id).toBe('aaaaaaaa-0000-0000-0000-000000000002');

    // The folder's only transcript is this session's.
    await rm(older);
    const human = expectOk(await cairn(['capture', 'claude-code', '--snapshot']));
    expect(human.stdout).toMatch(/^art_\w+ {2}claude-code-aaaaaaaa-0000-0000-0000-000000000002\.jsonl /);

    const elsewhere = await cairn(['capture', 'claude-code', '--snapshot', '--session-id', 'nope-nope']);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toMatch(/no transcript of session nope-nope/);
    const noKey = await ws.run(['capture', 'claude-code', '--snapshot'], { CLAUDE_CONFIG_DIR: claude });
    expect(noKey.code).toBe(2);
  });
});
