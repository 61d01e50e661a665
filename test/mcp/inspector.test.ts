import { execFile } from 'node:child_process';
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, childEnv } from '../helpers/process.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { ALL_TOOLS, TOOLS_WITHOUT_DESTRUCTIVE } from './tool-counts.js';

/**
 * The official MCP Inspector (CLI mode, the pinned devDependency; never downloaded) against the
 * built `cairn mcp` and a real server: what any MCP host would see.
 */

const INSPECTOR = path.resolve(import.meta.dirname, '../../node_modules/.bin/mcp-inspector');

let srv: TestServer;
let cwd: string;

beforeAll(async () => {
  srv = await startTestServer();
  cwd = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-inspector-')));
  await writeFile(path.join(cwd, 'report.md'), '# From disk\n');
});
afterAll(async () => {
  await srv?.close();
  await rm(cwd, { recursive: true, force: true });
});

/** `mcp-inspector --cli -e … node bin/cairn.js mcp [serverArgs] <inspectorArgs>`; its stdout as JSON. */
function inspect(serverArgs: string[], inspectorArgs: string[]): Promise<Record<string, unknown>> {
  const args = [
    '--cli',
    '-e',
    `CAIRN_API_KEY=${srv.apiKey}`,
    '-e',
    `CAIRN_API_URL=${srv.apiUrl}`,
    process.execPath,
    BIN,
    'mcp',
    ...serverArgs,
    ...inspectorArgs,
  ];
  return new Promise((resolve, reject) => {
    execFile(INSPECTOR, args, { cwd, env: childEnv({ HOME: cwd }), timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`mcp-inspector failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

/** The structured result of a tools/call, checked to be a success. */
function result(out: Record<string, unknown>): Record<string, unknown> {
  expect(out.isError ?? false, JSON.stringify(out)).toBe(false);
  return out.structuredContent as Record<string, unknown>;
}

// Each Inspector run starts two Node processes: seconds apiece on a busy machine.
describe('MCP Inspector CLI', { timeout: 120_000 }, () => {
  it('tools/list lists the thirteen tools of a host without confirmations, eighteen with --allow-destructive', async () => {
    const listed = (await inspect([], ['--method', 'tools/list'])).tools as { name: string; inputSchema: object }[];
    const names = listed.map((t) => t.name);
    expect(names).toHaveLength(TOOLS_WITHOUT_DESTRUCTIVE);
    expect(names).toEqual(expect.arrayContaining(['whoami', 'store_artifact', 'list_artifacts', 'publish_artifact']));
    for (const t of listed) expect(t.inputSchema).toMatchObject({ type: 'object' });
    const all = (await inspect(['--allow-destructive'], ['--method', 'tools/list'])).tools as { name: string }[];
    expect(all.map((t) => t.name)).toEqual(expect.arrayContaining(['delete_artifact', 'seal_session']));
    expect(all).toHaveLength(ALL_TOOLS);
  });

  it('tools/call whoami', async () => {
    const me = result(await inspect([], ['--method', 'tools/call', '--tool-name', 'whoami']));
    expect(me).toMatchObject({ tenant_name: 'main', plan: 'pro', api_key_last_4: srv.apiKey.slice(-4) });
  });

  it('tools/call store_artifact, from content and from a path, lands in Cairn', async () => {
    const call = (...toolArgs: string[]) =>
      inspect([], ['--method', 'tools/call', '--tool-name', 'store_artifact', '--tool-arg', ...toolArgs]);
    const fromContent = result(await call('filename=hello.txt', 'content=aGVsbG8=', 'session_id=inspector'));
    expect(fromContent).toMatchObject({ filename: 'hello.txt', size_bytes: 5, agent_id: 'inspector' });
    const fromPath = result(await call('filename=report.md', 'path=report.md', 'session_id=inspector'));
    expect(fromPath).toMatchObject({ content_type: 'text/markdown', size_bytes: 12 });
    const listed = await api(srv.apiUrl, srv.apiKey, 'GET', '/v1/artifacts?session_id=inspector');
    expect(listed.json.artifacts.map((a: { artifact_id: string }) => a.artifact_id).sort()).toEqual(
      [fromContent.artifact_id, fromPath.artifact_id].sort(),
    );
  });
});
