import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOOK_MARKER, HOOK_TIMEOUT_SECONDS } from '../../src/cli/client/claude-settings.js';
import { TOOLS_BY_NAME } from '../../src/mcp/tools.js';
import { cliWorkspace, expectOk } from '../helpers/cli.js';
import type { Rec } from '../helpers/e2e.js';
import { runCommand, writeCairnShim } from '../helpers/process.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';

/**
 * The Claude Code plugins in plugins/ and their marketplace entry (.claude-plugin/): the hook is
 * the one `cairn capture claude-code --install` writes, fed here a SessionEnd hook input recorded
 * from Claude Code 2.1.332; the MCP configs start; the skills name only real tools. Claude Code's
 * own validator (`claude plugin validate`) and a real session run when a `claude` binary is there
 * (CAIRN_TEST_CLAUDE, else `claude` on the PATH): its npm package is a 384 MB native binary, too
 * heavy for a dev dependency.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const LOCAL = path.join(ROOT, 'plugins/claude-code');
const HOSTED = path.join(ROOT, 'plugins/claude-code-hosted');
const readJson = async (file: string) => JSON.parse(await readFile(file, 'utf8'));
const fixture = (name: string) => path.join(ROOT, 'test/fixtures', name);

const CLAUDE = process.env.CAIRN_TEST_CLAUDE || 'claude';
const hasClaude = spawnSync(CLAUDE, ['--version'], { encoding: 'utf8' }).status === 0;
if (!hasClaude) {
  console.warn(
    `\n!!! SKIPPING the tests that run Claude Code itself: no ${CLAUDE} binary (set CAIRN_TEST_CLAUDE to one, ` +
      'e.g. from `npm install @anthropic-ai/claude-code` in a scratch folder)\n',
  );
}

let srv: TestServer;
let ws: Awaited<ReturnType<typeof cliWorkspace>>;
/** A folder holding a `cairn` that runs this checkout's bin/cairn.js, put first on the PATH. */
let shimDir: string;

beforeAll(async () => {
  srv = await startTestServer();
  ws = await cliWorkspace(srv.apiUrl);
  shimDir = path.join(ws.work, 'bin');
  await writeCairnShim(shimDir);
});
afterAll(async () => {
  await srv?.close();
  await ws?.remove();
});

/** What a process started by Claude Code sees: its PATH (with `cairn` on it), a temp HOME, the key. */
const hostEnv = (): Record<string, string> => ({
  PATH: `${shimDir}:${process.env.PATH}`,
  HOME: ws.work,
  CAIRN_CONFIG_DIR: ws.configDir,
  CAIRN_API_KEY: srv.apiKey,
  CAIRN_API_URL: srv.apiUrl,
});

/** Runs a hook command as Claude Code does: through a shell, the hook input on stdin. */
const runHook = (command: string, input: string) =>
  runCommand('sh', ['-c', command], { cwd: ws.work, env: hostEnv(), input });

const transcriptsOf = async (session: string): Promise<Rec[]> =>
  (await api(srv.apiUrl, srv.apiKey, 'GET', `/v1/artifacts?session_id=${session}&transcript=true`)).json.artifacts;

describe('the marketplace entry', () => {
  it('lists both plugins by the names their manifests give, from folders of this repository', async () => {
    const market = await readJson(path.join(ROOT, '.claude-plugin/marketplace.json'));
    expect(market.name).toBe('cairn');
    const entries = market.plugins as { name: string; source: string }[];
    expect(entries.map((e) => e.name)).toEqual(['cairn', 'cairn-hosted']);
    for (const entry of entries) {
      const manifest = await readJson(path.join(ROOT, entry.source, '.claude-plugin/plugin.json'));
      expect(manifest.name).toBe(entry.name);
    }
    expect(entries.map((e) => path.join(ROOT, e.source))).toEqual([LOCAL, HOSTED]);
  });
});

describe('the SessionEnd hook', { timeout: 60_000 }, () => {
  it('is the command `cairn capture claude-code --install` writes, run from the PATH', async () => {
    const plugin = (await readJson(path.join(LOCAL, 'hooks/hooks.json'))).hooks;
    const settings = path.join(ws.work, 'settings.json');
    expectOk(await ws.run(['capture', 'claude-code', '--install', '--settings', settings], hostEnv()));
    const installed = (await readJson(settings)).hooks;
    expect(Object.keys(plugin)).toEqual(['SessionEnd']);
    const command = installed.SessionEnd[0].hooks[0].command as string;
    expect(command).toMatch(new RegExp(`^/\\S+ /\\S+/cairn\\.js ${HOOK_MARKER} --settings `));
    // The same group but for the command's start: `cairn` from the PATH instead of absolute paths.
    const hook = { type: 'command', command: `cairn ${HOOK_MARKER}`, timeout: HOOK_TIMEOUT_SECONDS };
    expect(plugin.SessionEnd).toEqual([{ hooks: [hook] }]);
    expect(installed.SessionEnd).toEqual([{ hooks: [{ ...hook, command }] }]);
  });

  it('an entry installed before the time budget is replaced where it stands, and uninstalls cleanly', async () => {
    const settings = path.join(ws.work, 'old-settings.json');
    const other = { hooks: [{ type: 'command', command: 'echo bye' }] };
    const old = {
      hooks: [{ type: 'command', command: `/old/node /old/cairn.js ${HOOK_MARKER} --settings ${settings}` }],
    };
    await writeFile(settings, JSON.stringify({ hooks: { SessionEnd: [old, other] } }));
    expectOk(await ws.run(['capture', 'claude-code', '--install', '--settings', settings], hostEnv()));
    const [ours, kept] = (await readJson(settings)).hooks.SessionEnd;
    expect(kept).toEqual(other);
    expect(ours.hooks[0]).toMatchObject({ type: 'command', timeout: HOOK_TIMEOUT_SECONDS });
    expect(ours.hooks[0].command).not.toContain('/old/');
    const again = expectOk(await ws.run(['capture', 'claude-code', '--install', '--settings', settings], hostEnv()));
    expect(again.stdout).toContain('already in');
    expectOk(await ws.run(['capture', 'claude-code', '--uninstall', '--settings', settings], hostEnv()));
    expect(await readJson(settings)).toEqual({ hooks: { SessionEnd: [other] } });
  });

  it("stores the session's transcript from a recorded hook input, once even when both hooks run", async () => {
    const recorded = await readJson(fixture('claude-code-session-end-input.json'));
    expect(recorded).toMatchObject({ hook_event_name: 'SessionEnd', session_id: expect.any(String) });
    // The transcript the input points at, in a Claude Code folder of our own.
    const transcript = path.join(ws.work, 'projects', `${recorded.session_id}.jsonl`);
    await mkdir(path.dirname(transcript), { recursive: true });
    await copyFile(fixture('claude-code-session.jsonl'), transcript);
    const input = JSON.stringify({ ...recorded, transcript_path: transcript });

    const plugin = (await readJson(path.join(LOCAL, 'hooks/hooks.json'))).hooks.SessionEnd[0].hooks[0].command;
    const ran = await runHook(plugin, input);
    expect(ran.code, ran.stderr).toBe(0);
    const [stored, ...more] = await transcriptsOf(recorded.session_id);
    expect(more).toEqual([]);
    expect(stored).toMatchObject({
      filename: `claude-code-${recorded.session_id}.jsonl`,
      agent_id: 'claude-code',
      content_type: 'application/x-ndjson',
      metadata: { type: 'transcript', capture: 'end', model_source: 'transcript', model: expect.any(String) },
    });

    // A user with the plugin and the installed hook gets one artifact: the key comes from the content.
    const settings = await readJson(path.join(ws.work, 'settings.json'));
    const again = await runHook(settings.hooks.SessionEnd[0].hooks[0].command, input);
    expect(again.code, again.stderr).toBe(0);
    expect((await transcriptsOf(recorded.session_id)).map((a) => a.artifact_id)).toEqual([stored?.artifact_id]);
  });
});

describe('the MCP servers', { timeout: 60_000 }, () => {
  it('local: the .mcp.json entry starts cairn mcp from the PATH and lists its tools', async () => {
    const { command, args, ...rest } = (await readJson(path.join(LOCAL, '.mcp.json'))).mcpServers.cairn;
    expect({ command, args, rest }).toEqual({ command: 'cairn', args: ['mcp'], rest: {} });
    const client = new Client({ name: 'claude-code', version: '2.1.332' });
    await client.connect(new StdioClientTransport({ command, args, env: hostEnv(), cwd: ws.work, stderr: 'pipe' }));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('store_artifact');
    } finally {
      await client.close();
    }
  });

  it('hosted: the URL, expanded as Claude Code does, is the OAuth-protected endpoint', async () => {
    const server = (await readJson(path.join(HOSTED, '.mcp.json'))).mcpServers.cairn;
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Claude Code's own ${VAR:-default} syntax, not ours
    expect(server).toEqual({ type: 'http', url: '${CAIRN_API_URL:-http://127.0.0.1:8080}/mcp' });
    const expand = (s: string, env: Record<string, string>) =>
      s.replace(/\$\{(\w+):-([^}]*)\}/g, (_m, name: string, fallback: string) => env[name] || fallback);
    expect(expand(server.url, {})).toBe('http://127.0.0.1:8080/mcp');
    const url = expand(server.url, { CAIRN_API_URL: srv.apiUrl });
    // Without a token: 401 naming the resource metadata, where an OAuth client starts.
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain(
      `resource_metadata="${srv.apiUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
  });
});

describe('the skills', () => {
  it('each names itself as its folder, says when to use it, and names only tools Cairn has', async () => {
    const names = await readdir(path.join(LOCAL, 'skills'));
    expect(names.sort()).toEqual(['sessions-and-transcripts', 'sharing-artifacts', 'storing-artifacts']);
    for (const name of names) {
      const text = await readFile(path.join(LOCAL, 'skills', name, 'SKILL.md'), 'utf8');
      const front = /^---\nname: (.+)\ndescription: (.+)\n---\n/.exec(text);
      expect(front?.[1], name).toBe(name);
      expect(front?.[2]).toMatch(/^Use when /);
      // Every `snake_case` word in backticks that looks like a tool is one of Cairn's tools.
      const toolish = [...text.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)]
        .map((m) => m[1] as string)
        .filter((w) => /^(?:store|list|get|request|complete|create|revoke|delete|seal|publish|unpublish)_/.test(w));
      expect(toolish.length, name).toBeGreaterThan(0);
      for (const tool of toolish) expect(TOOLS_BY_NAME.has(tool), `${name}: ${tool}`).toBe(true);
    }
  });

  it("the hosted plugin's skills are the same files (a plugin folder cannot share them)", async () => {
    for (const name of await readdir(path.join(LOCAL, 'skills'))) {
      const file = path.join('skills', name, 'SKILL.md');
      expect(await readFile(path.join(HOSTED, file), 'utf8'), file).toBe(
        await readFile(path.join(LOCAL, file), 'utf8'),
      );
    }
    expect((await readdir(path.join(HOSTED, 'skills'))).sort()).toEqual(
      (await readdir(path.join(LOCAL, 'skills'))).sort(),
    );
  });
});

describe.skipIf(!hasClaude)("Claude Code's own checks", { timeout: 120_000 }, () => {
  const claudeEnv = () => ({ ...hostEnv(), CLAUDE_CONFIG_DIR: path.join(ws.work, '.claude') });
  const claude = (args: string[]) =>
    spawnSync(CLAUDE, args, { cwd: ws.work, encoding: 'utf8', env: claudeEnv(), timeout: 90_000 });

  it('claude plugin validate --strict passes the marketplace and both plugins', () => {
    for (const target of [ROOT, LOCAL, HOSTED]) {
      const run = claude(['plugin', 'validate', '--strict', '--json', target]);
      const report = JSON.parse(run.stdout);
      expect(report.success, `${target}: ${run.stdout}`).toBe(true);
      expect(run.status).toBe(0);
    }
    const local = JSON.parse(claude(['plugin', 'validate', '--json', LOCAL]).stdout);
    expect(local.provides.hooks).toEqual([{ event: 'SessionEnd', type: 'command', command: `cairn ${HOOK_MARKER}` }]);
    expect(local.provides.skills.sort()).toEqual([
      'cairn:sessions-and-transcripts',
      'cairn:sharing-artifacts',
      'cairn:storing-artifacts',
    ]);
  });

  it('a real session with the plugin loaded stores its transcript when it ends (no login needed)', async () => {
    const project = path.join(ws.work, 'project');
    await mkdir(project, { recursive: true });
    // Not logged in, Claude Code answers "Not logged in" and ends the session: SessionEnd still fires.
    // Not spawnSync: the server answering the hook runs in this process.
    const run = await runCommand(CLAUDE, ['--plugin-dir', LOCAL, '-p', 'hello'], { cwd: project, env: claudeEnv() });
    const listed = await api(
      srv.apiUrl,
      srv.apiKey,
      'GET',
      '/v1/artifacts?transcript=true&agent_id=claude-code&limit=200',
    );
    const fromSession = (listed.json.artifacts as Rec[]).filter(
      (a) => a.metadata?.capture === 'end' && a.session_id !== undefined,
    );
    const dir = path.join(ws.work, '.claude', 'projects');
    const sessions = (await readdir(dir, { recursive: true }))
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => path.basename(f, '.jsonl'));
    expect(sessions.length).toBeGreaterThan(0);
    expect(
      fromSession.map((a) => a.session_id),
      run.stdout + run.stderr,
    ).toEqual(expect.arrayContaining(sessions));
  });
});
