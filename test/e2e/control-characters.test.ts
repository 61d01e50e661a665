import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiResult, expectError, multipartBody, uploadJson } from '../helpers/e2e.js';
import { connectHttpMcp, type HttpMcp } from '../helpers/hosted.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, type McpSession } from '../mcp/mcp-client.js';

/**
 * Filenames, session ids and agent ids never hold a control character: C0 (ESC starts a terminal
 * escape sequence), DEL and C1 (U+009B is an 8-bit CSI, U+0085 a line break) are refused alike,
 * as `invalid_request` naming the field, on every path by which they are stored: the REST upload
 * (JSON, multipart fields, the multipart part's own filename), the presigned upload-url, and
 * store_artifact / request_upload_url on the stdio MCP server (through the API) and the hosted
 * MCP endpoint (on the core).
 */

const FIELDS = ['filename', 'session_id', 'agent_id'] as const;
type Field = (typeof FIELDS)[number];
const CONTROLS: [string, string][] = [
  ['NUL', '\u0000'],
  ['ESC', '\u001b'],
  ['LF', '\n'],
  ['DEL', '\u007f'],
  ['NEL (C1)', '\u0085'],
  ['CSI (C1)', '\u009b'],
  ['APC (C1)', '\u009f'],
];
const valid: Record<Field, string> = { filename: 'ok.txt', session_id: 'ctl-session', agent_id: 'ctl-agent' };
const content = Buffer.from('controls').toString('base64');

let srv: TestServer;
let hosted: HttpMcp;
let stdio: McpSession;
let cwd: string;

beforeAll(async () => {
  srv = await startTestServer();
  hosted = await connectHttpMcp(srv.apiUrl, srv.apiKey);
  cwd = await mkdtemp(path.join(tmpdir(), 'cairn-controls-'));
  await writeFile(path.join(cwd, 'plain.txt'), 'controls');
  stdio = await connectMcp({ env: { HOME: cwd, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl }, cwd });
});
afterAll(async () => {
  await stdio?.close();
  await hosted?.close();
  await srv?.close();
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

/** A refusal: the status, the code and the message, from the API or from a tool result. */
interface Refusal {
  status: number;
  code: string;
  message: string;
}

function fromApi(r: ApiResult): Refusal {
  if (r.status < 400) return { status: r.status, code: 'stored', message: r.text };
  expectError(r, r.status, r.json.error.code);
  return { status: r.status, code: r.json.error.code, message: r.json.error.message };
}

function fromTool(r: CallToolResult): Refusal {
  const meta = (r._meta ?? {}) as { status?: number; code?: string };
  const text = r.content[0]?.type === 'text' ? r.content[0].text : '';
  if (!r.isError) return { status: 200, code: 'stored', message: text };
  return { status: meta.status ?? 0, code: meta.code ?? '', message: text };
}

const args = (field: Field, value: string) => ({ ...valid, [field]: value });
const mcpArgs = (field: Field, value: string) => {
  const a = args(field, value);
  return { filename: a.filename, session_id: a.session_id, agent_id: a.agent_id };
};

/** Every path that stores these fields, as (field, value) → the answer. */
const ENTRIES: Record<string, (field: Field, value: string) => Promise<Refusal>> = {
  'REST JSON': async (field, value) =>
    fromApi(await uploadJson(srv.apiUrl, srv.apiKey, { ...args(field, value), content })),
  'REST multipart field': async (field, value) => {
    const fd = multipartBody({ content: 'controls', before: args(field, value) });
    return fromApi(await api(srv.apiUrl, srv.apiKey, 'POST', '/v1/artifacts', fd));
  },
  'REST presigned upload-url': async (field, value) =>
    fromApi(
      await api(srv.apiUrl, srv.apiKey, 'POST', '/v1/artifacts/upload-url', { ...args(field, value), size_bytes: 8 }),
    ),
  'stdio MCP store_artifact (content)': async (field, value) =>
    fromTool(await stdio.call('store_artifact', { ...mcpArgs(field, value), content })),
  'stdio MCP store_artifact (path)': async (field, value) =>
    fromTool(await stdio.call('store_artifact', { ...mcpArgs(field, value), path: 'plain.txt' })),
  'stdio MCP request_upload_url': async (field, value) =>
    fromTool(await stdio.call('request_upload_url', { ...mcpArgs(field, value), size_bytes: 8 })),
  'hosted MCP store_artifact': async (field, value) =>
    fromTool(await hosted.call('store_artifact', { ...mcpArgs(field, value), content })),
  'hosted MCP request_upload_url': async (field, value) =>
    fromTool(await hosted.call('request_upload_url', { ...mcpArgs(field, value), size_bytes: 8 })),
};

describe.each(Object.keys(ENTRIES))('%s', (entry) => {
  it('refuses C0, DEL and C1 in filename, session_id and agent_id, naming the field', async () => {
    const seen: Record<string, string> = {};
    const expected: Record<string, string> = {};
    for (const field of FIELDS) {
      for (const [name, char] of CONTROLS) {
        const label = `${field} with ${name}`;
        const r = await ENTRIES[entry]!(field, `a${char}b.txt`);
        seen[label] = `${r.status} ${r.code} ${r.message.includes(field) ? 'names the field' : r.message}`;
        expected[label] = `400 invalid_request names the field`;
      }
    }
    expect(seen).toEqual(expected);
  });
});

describe('what is refused is not stored, and what is allowed still is', () => {
  it('no artifact holds a control character, while non-ASCII names pass', async () => {
    const list = await api(srv.apiUrl, srv.apiKey, 'GET', '/v1/artifacts?limit=200');
    expect(list.json.artifacts).toEqual([]);
    for (const filename of ['résumé.txt', '報告.md', 'emoji 👨‍👩‍👧.txt', 'tab-free name.txt', '\u00a0nbsp.txt']) {
      const r = await uploadJson(srv.apiUrl, srv.apiKey, { filename, content });
      expect(r.status, r.text).toBe(201);
      expect(r.json.filename).toBe(filename);
    }
  });

  it('the multipart part’s own filename (no filename field) is checked the same way', async () => {
    for (const filename of ['\u009b31mred\u0085.txt', 'a\u0090b.txt']) {
      const fd = multipartBody({ content: 'controls', filename });
      const r = await api(srv.apiUrl, srv.apiKey, 'POST', '/v1/artifacts', fd);
      expectError(r, 400, 'invalid_request');
      expect(r.json.error.message).toMatch(/filename/);
    }
  });
});
