import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foreign } from '../helpers/foreign-http.js';
import { connectHttpMcp, type HttpMcp } from '../helpers/hosted.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, data, type McpSession } from './mcp-client.js';

/**
 * Issue 49, driven the way the trials drove it: the MCP SDK client over stdio (`cairn mcp`) and
 * against the hosted endpoint (`/mcp`), and raw HTTP written the way the hosted service's client
 * writes it. Each case runs on both MCP servers: they share the tool table, not the transport.
 */

let srv: TestServer;
let dir: string;
let stdio: McpSession;
let hosted: HttpMcp;
let freeStdio: McpSession;
let freeKey: string;

const fixture = (name: string) => readFile(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
/** The subagent fixture's models: the last assistant records are a subagent's and a <synthetic> one. */
const SUBAGENT_MODELS = {
  type: 'transcript',
  model: 'claude-opus-4-5-20251101',
  model_source: 'transcript',
  models_used: 'claude-haiku-4-5-20251001,claude-opus-4-5-20251101',
};

beforeAll(async () => {
  srv = await startTestServer();
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-mcp-49-')));
  await writeFile(path.join(dir, 'session.jsonl'), await fixture('claude-code-subagent-last.jsonl'));
  await writeFile(path.join(dir, 'note.md'), '# Note\n');
  await writeFile(path.join(dir, 'page.html'), '<h1>Hi</h1>');
  const env = { HOME: dir, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl };
  stdio = await connectMcp({ env, cwd: dir, args: ['--allow-path', dir] });
  hosted = await connectHttpMcp(srv.apiUrl, srv.apiKey);
  freeKey = await srv.createTenant('free-49', 'free');
  freeStdio = await connectMcp({ env: { ...env, CAIRN_API_KEY: freeKey }, cwd: dir });
});
afterAll(async () => {
  await stdio?.close();
  await freeStdio?.close();
  await hosted?.close();
  await srv?.close();
  await rm(dir, { recursive: true, force: true });
});

const servers = () =>
  [
    ['stdio', (name: string, args: Record<string, unknown>) => stdio.call(name, args)],
    ['hosted', (name: string, args: Record<string, unknown>) => hosted.call(name, args)],
  ] as const;
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

describe('store_artifact', () => {
  it('transcript: true reads the models on both servers: the last main-loop model, models_used sorted', async () => {
    const content = Buffer.from(await fixture('claude-code-subagent-last.jsonl')).toString('base64');
    for (const [where, call] of servers()) {
      const rec = data(await call('store_artifact', { filename: `${where}.jsonl`, content, transcript: true }));
      expect(rec.metadata, where).toEqual(SUBAGENT_MODELS);
    }
    // From a local path too, and a declared model wins there as everywhere.
    const fromPath = data(await stdio.call('store_artifact', { path: 'session.jsonl', transcript: true }));
    expect(fromPath.metadata).toEqual(SUBAGENT_MODELS);
    const declared = data(
      await stdio.call('store_artifact', { path: 'session.jsonl', transcript: true, model: 'my-agent' }),
    );
    expect(declared.metadata).toEqual({
      type: 'transcript',
      model: 'my-agent',
      models_used: SUBAGENT_MODELS.models_used,
    });
  });

  it('a path without filename takes the file name; text or content without one is told what to pass', async () => {
    const rec = data(await stdio.call('store_artifact', { path: 'note.md' }));
    expect(rec).toMatchObject({ filename: 'note.md', content_type: 'text/markdown' });
    for (const [where, call] of servers()) {
      const r = await call('store_artifact', { text: 'x' });
      expect(r.isError, where).toBe(true);
      expect(r._meta).toMatchObject({ code: 'invalid_request', retry_hint: 'fix_arguments' });
      expect(text(r)).toMatch(/needs `filename` with `text` or `content`/);
    }
  });

  it('takes what the hosted service’s clients take inline: 10 MiB, not 10 MB (a 10.2 MB file is stored)', async () => {
    const bytes = Buffer.alloc(10_200_000, 'a');
    for (const [where, call] of servers()) {
      const rec = data(await call('store_artifact', { filename: `${where}-10.2mb.txt`, text: bytes.toString() }));
      expect(rec.size_bytes, where).toBe(10_200_000);
      const over = await call('store_artifact', {
        filename: `${where}-over.bin`,
        content: Buffer.alloc(10_485_761).toString('base64'),
      });
      expect(over._meta, where).toMatchObject({ code: 'file_too_large' });
      expect(text(over)).toContain('10 MiB (10,485,760 bytes)');
    }
  }, 120_000);
});

describe('request_upload_url and the reservation it makes', () => {
  it('the same automatic key as store_artifact: returned in _meta; a repeat answers the same pending artifact', async () => {
    for (const [where, call] of servers()) {
      const first = await call('request_upload_url', { filename: `${where}.bin`, size_bytes: 2048 });
      const ticket = data(first);
      const key = first._meta?.idempotency_key as string;
      expect(key, where).toMatch(/^[0-9a-f-]{36}$/);
      // "Verify state": the reservation is there to see.
      expect(data(await call('get_artifact', { artifact_id: ticket.artifact_id }))).toMatchObject({
        artifact_id: ticket.artifact_id,
        filename: `${where}.bin`,
        size_bytes: 2048,
        status: 'pending',
        held_until: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      const again = await call('request_upload_url', {
        filename: `${where}.bin`,
        size_bytes: 2048,
        idempotency_key: key,
      });
      expect(data(again).artifact_id, where).toBe(ticket.artifact_id);
      expect(again._meta).toEqual({ idempotency_key: key, replayed: true });
      // A pending artifact is not a file yet: no URL to its bytes.
      const url = await call('get_artifact_download_url', { artifact_id: ticket.artifact_id });
      expect(url._meta, where).toMatchObject({ code: 'artifact_not_found' });
    }
  });
});

describe('publish_artifact with a password on an HTML artifact', () => {
  it('says no argument fixes it, with a hint that invites no retry, naming the alternatives', async () => {
    const html = data(await stdio.call('store_artifact', { path: 'page.html' }));
    for (const [where, call] of servers()) {
      const r = await call('publish_artifact', {
        artifact_id: html.artifact_id,
        access: 'password',
        password: 'pw-123',
      });
      expect(r._meta, where).toMatchObject({ code: 'invalid_request', retry_hint: 'do_not_retry' });
      expect(text(r)).toMatch(/not available for HTML artifacts/);
      expect(text(r)).toMatch(/download link/);
      expect(text(r)).toMatch(/non-HTML format/);
    }
    const tools = (await stdio.client.listTools()).tools;
    expect(tools.find((t) => t.name === 'publish_artifact')?.description).toMatch(/not available for HTML artifacts/);
  });

  it('on Free both reasons come in one answer', async () => {
    const html = data(await freeStdio.call('store_artifact', { filename: 'page.html', text: '<p>x</p>' }));
    const r = await freeStdio.call('publish_artifact', {
      artifact_id: html.artifact_id,
      access: 'password',
      password: 'pw-123',
    });
    expect(r._meta).toMatchObject({
      code: 'invalid_request',
      retry_hint: 'do_not_retry',
      upgrade_url: expect.any(String),
    });
    expect(text(r)).toMatch(/not available for HTML artifacts/);
    expect(text(r)).toMatch(/also need the Pro plan/);
  });
});

describe('words agents act on', () => {
  it('the download URL tools say they are bearer URLs; the hidden-links instructions say a page cannot expire', async () => {
    const tools = (await freeStdio.client.listTools()).tools;
    const single = tools.find((t) => t.name === 'get_artifact_download_url')?.description ?? '';
    expect(single).toMatch(/bearer URL: anyone who holds it can download the file until it expires/);
    expect(single).not.toMatch(/NOT for/);
    expect(freeStdio.client.getInstructions()).toMatch(
      /A page has no expiry, so it cannot meet a time-limited request/,
    );
  });

  it('tool schemas use only the portable subset: no $schema, const, type lists or {} for any value', async () => {
    const offending: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (Array.isArray(node)) {
        node.forEach((n, i) => {
          walk(n, `${where}[${i}]`);
        });
        return;
      }
      if (typeof node !== 'object' || node === null) return;
      for (const [key, value] of Object.entries(node)) {
        const at = `${where}.${key}`;
        if (key === '$schema' || key === 'const') offending.push(at);
        if (key === 'type' && Array.isArray(value)) offending.push(at);
        if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0) {
          if (key !== 'properties') offending.push(at);
        }
        if (key === 'properties' && typeof value === 'object' && value !== null) {
          for (const [name, schema] of Object.entries(value)) walk(schema, `${at}.${name}`);
        } else walk(value, at);
      }
    };
    for (const client of [stdio.client, hosted.client]) {
      for (const tool of (await client.listTools()).tools) walk(tool.inputSchema, tool.name);
    }
    expect(offending).toEqual([]);
    // The same rules still hold: delete_artifact needs confirm true, list filters take numbers.
    const confirmOnly = (await hosted.client.listTools()).tools.find((t) => t.name === 'delete_artifact');
    expect(confirmOnly?.inputSchema.properties?.confirm).toMatchObject({ type: 'boolean', enum: [true] });
  });

  it('cairn mcp prints its start line on stderr and nothing else (no schema warnings)', async () => {
    const lines = stdio.stderr().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^cairn mcp \S+ \(Cairn /);
  });
});

describe('raw HTTP, as the hosted service’s client writes it', () => {
  const call = (method: string, p: string, body?: unknown, headers: Record<string, string> = {}) =>
    foreign(srv.apiUrl, {
      method,
      path: p,
      headers: {
        Authorization: `Bearer ${srv.apiKey}`,
        'Content-Type': 'application/json',
        Accept: 'application/json',
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('upload-url takes an Idempotency-Key; the pending artifact answers GET; messages end without a period', async () => {
    const first = await call(
      'POST',
      '/v1/artifacts/upload-url',
      { filename: 'raw.bin', size_bytes: 10 },
      {
        'Idempotency-Key': 'raw-http-1',
      },
    );
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await call(
      'POST',
      '/v1/artifacts/upload-url',
      { filename: 'raw.bin', size_bytes: 10 },
      {
        'Idempotency-Key': 'raw-http-1',
      },
    );
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json.artifact_id).toBe(first.json.artifact_id);
    const got = await call('GET', `/v1/artifacts/${first.json.artifact_id}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ status: 'pending', held_until: expect.any(String), content_hash: '' });

    // Its clients write `${message}. Set …`: a message of ours must not end with one already.
    const revoked = await foreign(srv.apiUrl, {
      method: 'GET',
      path: '/v1/whoami',
      headers: { Authorization: `Bearer ak_live_${'x'.repeat(32)}` },
    });
    expect(revoked.status).toBe(401);
    const message = revoked.json.error.message as string;
    expect(message).toMatch(/revoked\)$/);
    expect(`${message}. Set SERVICE_API_KEY`).not.toContain('..');
  });
});
