import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { put } from '../helpers/e2e.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, data, type McpSession } from './mcp-client.js';

/**
 * The session tools of `cairn mcp` through the MCP SDK's own client: get_session_archive_url
 * (read: a private archive URL) and create_session_link (destroy: a public link to a sealed
 * session), with the user's confirmation asked in the session's words.
 */
let srv: TestServer;
let cwd: string;
let env: Record<string, string>;
let asked: string[];
let mcp: McpSession;

beforeAll(async () => {
  srv = await startTestServer();
  cwd = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-mcp-session-')));
  env = { HOME: cwd, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl };
  asked = [];
  mcp = await connectMcp({
    env,
    cwd,
    elicitation: (req) => {
      asked.push(req.message);
      return { action: 'accept', content: {} };
    },
  });
  await put(srv.apiUrl, srv.apiKey, '# Findings', { filename: 'report.md', session_id: 'mcp-run' });
  await put(srv.apiUrl, srv.apiKey, 'a,b', { filename: 'data.csv', session_id: 'mcp-run' });
});
afterAll(async () => {
  await mcp?.close();
  await srv?.close();
  await rm(cwd, { recursive: true, force: true });
});

describe('session tools', () => {
  it('get_session_archive_url returns a signed archive URL that serves the zip', async () => {
    const tools = (await mcp.client.listTools()).tools;
    const tool = tools.find((t) => t.name === 'get_session_archive_url');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: true });
    const r = data(await mcp.call('get_session_archive_url', { session_id: 'mcp-run' }));
    expect(r).toMatchObject({ format: 'zip', filename: 'mcp-run.zip', artifact_count: 2 });
    const res = await fetch(r.archive_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    const tgz = data(await mcp.call('get_session_archive_url', { session_id: 'mcp-run', format: 'tar.gz' }));
    expect(tgz.filename).toBe('mcp-run.tar.gz');
    const unknown = await mcp.call('get_session_archive_url', { session_id: 'nope' });
    expect(unknown.isError).toBe(true);
    expect(unknown._meta).toMatchObject({ code: 'session_not_found' });
    const bad = await mcp.call('get_session_archive_url', { session_id: 'mcp-run', format: 'rar' });
    expect(bad.isError).toBe(true);
  });

  it('create_session_link asks the user, then links the sealed session', async () => {
    const tool = (await mcp.client.listTools()).tools.find((t) => t.name === 'create_session_link');
    expect(tool?.annotations).toMatchObject({ destructiveHint: true, idempotentHint: false });
    const open = await mcp.call('create_session_link', { session_id: 'mcp-run' });
    expect(open.isError).toBe(true);
    expect(open._meta).toMatchObject({ code: 'invalid_request' });
    data(await mcp.call('seal_session', { session_id: 'mcp-run' }));
    asked.length = 0;
    const link = data(await mcp.call('create_session_link', { session_id: 'mcp-run', ttl: '3d' }));
    expect(asked).toEqual([expect.stringMatching(/public link to session mcp-run\?.*all of its files for 3 days\./)]);
    expect(link.url).toMatch(/\/s\/lnk_[A-Za-z0-9]{20}$/);
    expect((await fetch(link.archive_url)).status).toBe(200);
    const both = await mcp.call('create_session_link', { session_id: 'mcp-run', ttl: '3d', expires_in: 60 });
    expect(both.isError).toBe(true);
  });

  it('a host that cannot confirm sees neither link tool, but still the read one', async () => {
    const s = await connectMcp({ env, cwd });
    try {
      const names = (await s.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('get_session_archive_url');
      expect(names).not.toContain('create_session_link');
      const r = await s.call('create_session_link', { session_id: 'mcp-run' });
      expect(r._meta).toMatchObject({ code: 'destructive_tools_disabled' });
      expect(r.content[0]).toMatchObject({ text: expect.stringContaining('cairn link --session mcp-run') });
    } finally {
      await s.close();
    }
  });
});
