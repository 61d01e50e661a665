import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newArtifactId } from '../../src/core/ids.js';
import { BYTES_CAP } from '../../src/mcp/resources.js';
import { runCairn } from '../helpers/cli.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, data, type McpSession, runMcpExpectingExit, startFlakyProxy } from './mcp-client.js';
import { ALL_TOOLS, TOOLS_WITHOUT_DESTRUCTIVE } from './tool-counts.js';

/** `cairn mcp` (dist/, built first) through the MCP SDK's own client, against a real server. */

const READ_TOOLS = [
  'whoami',
  'list_artifacts',
  'get_artifact',
  'get_artifact_download_url',
  'get_artifact_download_urls',
  'list_sessions',
  'list_links',
  'get_session_archive_url',
];
const DESTRUCTIVE = ['create_download_link', 'create_session_link', 'revoke_link', 'delete_artifact', 'seal_session'];
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

let srv: TestServer;
let base: string;
let home: string;
let cwd: string;
let extra: string;
let env: Record<string, string>;
let confirm: McpSession;

beforeAll(async () => {
  srv = await startTestServer();
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-mcp-')));
  home = path.join(base, 'home');
  cwd = path.join(home, 'project');
  extra = path.join(base, 'extra');
  await mkdir(path.join(home, '.ssh'), { recursive: true });
  await mkdir(cwd, { recursive: true });
  await mkdir(extra, { recursive: true });
  await writeFile(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE');
  await writeFile(path.join(cwd, 'report.md'), '# Findings\n');
  await writeFile(path.join(cwd, '.env'), 'SECRET=1');
  await writeFile(path.join(extra, 'data.csv'), 'a,b\n1,2\n');
  env = { HOME: home, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl };
  confirm = await connectMcp({ env, cwd, confirmations: true, args: ['--allow-path', extra] });
});

afterAll(async () => {
  await confirm?.close();
  await srv?.close();
  await rm(base, { recursive: true, force: true });
});

describe('destructive-tool gating', () => {
  it('a host without confirmations sees no destructive tools, and calls are refused and audited', async () => {
    const s = await connectMcp({ env, cwd });
    try {
      const names = (await s.client.listTools()).tools.map((t) => t.name);
      expect(names).toHaveLength(TOOLS_WITHOUT_DESTRUCTIVE);
      for (const d of DESTRUCTIVE) expect(names).not.toContain(d);
      const r = await s.call('seal_session', { session_id: 'gated' });
      expect(r.isError).toBe(true);
      expect(r._meta).toMatchObject({ status: 403, code: 'destructive_tools_disabled', retry_hint: 'do_not_retry' });
      // stderr and stdout are separate pipes: the audit line may arrive just after the reply.
      await vi.waitFor(() =>
        expect(s.stderr()).toMatch(/cairn-mcp audit .*"tool":"seal_session".*"outcome":"refused"/),
      );
    } finally {
      await s.close();
    }
  });

  it('a host with confirmations sees them with requiresConfirmation', async () => {
    const { tools } = await confirm.client.listTools();
    expect(tools).toHaveLength(ALL_TOOLS);
    for (const t of tools) {
      const needs = DESTRUCTIVE.includes(t.name);
      expect(t._meta?.requiresConfirmation === true).toBe(needs);
      // unpublish_artifact takes a live page down: destructive too, though not gated (publishing undoes it).
      expect(t.annotations?.destructiveHint === true).toBe(needs || t.name === 'unpublish_artifact');
      expect(t.annotations?.readOnlyHint === true).toBe(READ_TOOLS.includes(t.name));
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('publish_artifact')?.annotations?.idempotentHint).toBe(true);
    expect(byName.get('create_download_link')?.annotations?.idempotentHint).toBe(false);
    // With `path` the file's own name is the default: nothing is required by the schema itself.
    expect(byName.get('store_artifact')?.inputSchema.required).toBeUndefined();
  });

  it('--allow-destructive lists them without requiresConfirmation and allows the call', async () => {
    const s = await connectMcp({ env, cwd, args: ['--allow-destructive'] });
    try {
      const { tools } = await s.client.listTools();
      expect(tools).toHaveLength(ALL_TOOLS);
      expect(tools.some((t) => t._meta?.requiresConfirmation)).toBe(false);
      const stored = data(
        await s.call('store_artifact', { filename: 'g.txt', content: 'aGk=', session_id: 'allowed' }),
      );
      expect(data(await s.call('seal_session', { session_id: 'allowed' }))).toMatchObject({ status: 'sealed' });
      // stderr and stdout are separate pipes: the audit line may arrive just after the reply.
      await vi.waitFor(() =>
        expect(s.stderr()).toMatch(/cairn-mcp audit .*"tool":"seal_session".*"session_id":"allowed".*"outcome":"ok"/),
      );
      expect(stored.session_id).toBe('allowed');
      expect(s.streamErrors).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe('elicitation: hosts that declare the standard capability confirm through it', () => {
  /** Connects a host that answers every confirmation with `action`, recording the questions. */
  const elicitingHost = async (action: 'accept' | 'decline' | 'cancel') => {
    const asked: string[] = [];
    const s = await connectMcp({
      env,
      cwd,
      elicitation: (req) => {
        asked.push(req.message);
        return { action };
      },
    });
    return { s, asked };
  };
  const stored = async (s: McpSession, session?: string) =>
    data(await s.call('store_artifact', { filename: 'e.txt', content: 'aGk=', session_id: session })).artifact_id;

  it('lists the destructive tools, and the description points at create_download_link', async () => {
    const { s } = await elicitingHost('accept');
    try {
      const { tools } = await s.client.listTools();
      expect(tools).toHaveLength(ALL_TOOLS);
      const names = tools.map((t) => t.name);
      for (const d of DESTRUCTIVE) expect(names).toContain(d);
      const url = tools.find((t) => t.name === 'get_artifact_download_url');
      expect(url?.description).toContain('create_download_link');
    } finally {
      await s.close();
    }
  });

  it('accept: the user is asked what will happen, then the call runs', async () => {
    const { s, asked } = await elicitingHost('accept');
    try {
      const id = await stored(s);
      const link = data(await s.call('create_download_link', { artifact_id: id, expires_in: 86_400 }));
      expect(link.url).toMatch(/^http/);
      expect(asked).toEqual([expect.stringMatching(new RegExp(`public download link for "e.txt" \\(${id}\\).*1 day`))]);
      // The lifetime asked about is the one the link gets, whichever way it was given.
      const days = data(await s.call('create_download_link', { artifact_id: id, ttl: '3d' }));
      expect(Date.parse(days.expires_at) - Date.parse(days.created_at)).toBe(3 * 86_400_000);
      expect(asked[1]).toMatch(/for 3 days\.$/);
      asked.splice(1, 1);
      const gone = data(await s.call('delete_artifact', { artifact_id: id, confirm: true }));
      expect(gone).toMatchObject({ artifact_id: id, deleted: true });
      expect(asked).toHaveLength(2);
      await vi.waitFor(() =>
        expect(s.stderr()).toMatch(/cairn-mcp audit .*"tool":"delete_artifact".*"gating":"elicit","outcome":"ok"/),
      );
      // Arguments that fail validation, or a call that can change nothing, are answered before anyone is asked.
      const bad = await s.call('delete_artifact', { artifact_id: id });
      expect(bad._meta).toMatchObject({ code: 'invalid_request' });
      const again = data(await s.call('delete_artifact', { artifact_id: id, confirm: true }));
      expect(again).toMatchObject({ artifact_id: id, already_deleted: true });
      const unknown = await s.call('delete_artifact', { artifact_id: 'art_AAAAAAAAAAAAAAAA', confirm: true });
      expect(unknown._meta).toMatchObject({ code: 'artifact_not_found' });
      const live = await stored(s);
      for (const args of [
        { artifact_id: live, ttl: '31d' },
        { artifact_id: live, ttl: '3d', expires_in: 60 },
      ]) {
        const refused = await s.call('create_download_link', args);
        expect(refused._meta, JSON.stringify(args)).toMatchObject({
          code: 'invalid_request',
          retry_hint: 'fix_arguments',
        });
      }
      expect(asked).toHaveLength(2);
    } finally {
      await s.close();
    }
  });

  it('decline: nothing runs, and the result says the user declined', async () => {
    const { s, asked } = await elicitingHost('decline');
    try {
      const id = await stored(s);
      const r = await s.call('delete_artifact', { artifact_id: id, confirm: true });
      expect(r.isError).toBe(true);
      expect(r._meta).toMatchObject({ status: 403, code: 'declined_by_user', retry_hint: 'do_not_retry' });
      expect(JSON.stringify(r.content)).toMatch(/not run: the user declined/);
      expect(asked).toEqual([expect.stringContaining(`Delete "e.txt" (${id})?`)]);
      expect(data(await s.call('get_artifact', { artifact_id: id })).artifact_id).toBe(id);
      await vi.waitFor(() =>
        expect(s.stderr()).toMatch(/cairn-mcp audit .*"tool":"delete_artifact".*"outcome":"declined"/),
      );
    } finally {
      await s.close();
    }
  });

  it('cancel: nothing runs, and the result says the question was dismissed', async () => {
    const { s } = await elicitingHost('cancel');
    try {
      await stored(s, 'elicit-cancel');
      const r = await s.call('seal_session', { session_id: 'elicit-cancel' });
      expect(r._meta).toMatchObject({ code: 'cancelled_by_user', retry_hint: 'do_not_retry' });
      const sessions = data(await s.call('list_sessions', {})).sessions as { session_id: string; is_sealed: boolean }[];
      expect(sessions.find((x) => x.session_id === 'elicit-cancel')?.is_sealed).toBe(false);
      const link = await s.call('create_download_link', { artifact_id: await stored(s) });
      expect(link._meta).toMatchObject({ code: 'cancelled_by_user' });
    } finally {
      await s.close();
    }
  });

  it('a host that declares nothing is never pointed at a tool it cannot see', async () => {
    const s = await connectMcp({ env, cwd });
    try {
      const { tools } = await s.client.listTools();
      const names = new Set(tools.map((t) => t.name));
      for (const t of tools) {
        for (const other of [...READ_TOOLS, ...DESTRUCTIVE, 'store_artifact', 'publish_artifact']) {
          if (t.description?.includes(other)) expect(names, `${t.name} names ${other}`).toContain(other);
        }
      }
      expect(tools.find((t) => t.name === 'get_artifact_download_url')?.description).toContain('publish_artifact');
    } finally {
      await s.close();
    }
  });
});

describe('tools', () => {
  it('whoami', async () => {
    const me = data(await confirm.call('whoami'));
    expect(me.api_key_last_4).toBe(srv.apiKey.slice(-4));
    expect(me.plan).toBe('pro');
  });

  it('store_artifact from content: agent defaults to the client name, model goes to metadata, key returned', async () => {
    const args = { filename: 'notes.txt', content: Buffer.from('hello').toString('base64'), model: 'm-1' };
    const r = await confirm.call('store_artifact', { ...args, session_id: 's1', metadata: { k: 'v' } });
    const rec = data(r);
    expect(rec).toMatchObject({ filename: 'notes.txt', size_bytes: 5, agent_id: 'test-agent', session_id: 's1' });
    expect(rec.metadata).toEqual({ k: 'v', model: 'm-1' });
    const key = r._meta?.idempotency_key as string;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    // The same key again returns the original artifact; a new call makes a new one.
    const again = data(await confirm.call('store_artifact', { ...args, idempotency_key: key }));
    expect(again.artifact_id).toBe(rec.artifact_id);
    const other = data(await confirm.call('store_artifact', { ...args, metadata: { model: 'kept' } }));
    expect(other.artifact_id).not.toBe(rec.artifact_id);
    expect(other.metadata.model).toBe('kept');
  });

  it('store_artifact from a path in the cwd and in an --allow-path root, as a transcript', async () => {
    const md = data(await confirm.call('store_artifact', { filename: 'report.md', path: 'report.md' }));
    expect(md).toMatchObject({ size_bytes: 11, content_type: 'text/markdown' });
    const csv = data(
      await confirm.call('store_artifact', {
        filename: 'log.ndjson',
        path: path.join(extra, 'data.csv'),
        transcript: true,
        agent_id: 'me',
      }),
    );
    expect(csv).toMatchObject({ size_bytes: 8, agent_id: 'me' });
    expect(csv.metadata.type).toBe('transcript');
    const list = data(await confirm.call('list_artifacts', { transcript: true }));
    expect(list.artifacts.map((a: { artifact_id: string }) => a.artifact_id)).toEqual([csv.artifact_id]);
  });

  it('store_artifact refuses confined paths and bad argument combinations', async () => {
    for (const p of ['.env', '../.ssh/id_ed25519', path.join(home, '.ssh', 'id_ed25519'), '/etc/passwd']) {
      const r = await confirm.call('store_artifact', { filename: 'x', path: p });
      expect(r.isError).toBe(true);
      expect(r._meta).toMatchObject({ code: 'path_refused', retry_hint: 'do_not_retry' });
    }
    const both = await confirm.call('store_artifact', { filename: 'x', path: 'report.md', content: 'aGk=' });
    expect(both._meta).toMatchObject({ status: 400, code: 'invalid_request' });
    const none = await confirm.call('store_artifact', { filename: 'x' });
    expect(none._meta).toMatchObject({ code: 'invalid_request' });
  });

  it('list_artifacts, get_artifact, get_artifact_download_url', async () => {
    const rec = data(
      await confirm.call('store_artifact', {
        filename: 'a.txt',
        content: 'YQ==',
        session_id: 'listing',
        metadata: { kind: 'x1', stage: 'final' },
      }),
    );
    const bySession = data(await confirm.call('list_artifacts', { session_id: 'listing', limit: 5 }));
    expect(bySession.artifacts).toHaveLength(1);
    const byMeta = data(await confirm.call('list_artifacts', { metadata: { kind: 'x1' } }));
    expect(byMeta.artifacts[0].artifact_id).toBe(rec.artifact_id);
    const two = data(await confirm.call('list_artifacts', { metadata: { kind: 'x1', stage: 'final' } }));
    expect(two.artifacts.map((a: { artifact_id: string }) => a.artifact_id)).toEqual([rec.artifact_id]);
    expect(data(await confirm.call('list_artifacts', { metadata: { kind: 'x1', stage: 'draft' } })).artifacts).toEqual(
      [],
    );
    const nine = await confirm.call('list_artifacts', {
      metadata: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, 'v'])),
    });
    expect(nine._meta).toMatchObject({ code: 'invalid_request' });
    expect(data(await confirm.call('get_artifact', { artifact_id: rec.artifact_id })).page).toBeNull();
    const url = data(await confirm.call('get_artifact_download_url', { artifact_id: rec.artifact_id }));
    expect(url.expires_in).toBe(3600);
    expect(await (await fetch(url.download_url)).text()).toBe('a');
    const unknown = 'art_0000000000000000';
    const batch = data(await confirm.call('get_artifact_download_urls', { artifact_ids: [unknown, rec.artifact_id] }));
    expect(batch.download_urls.map((i: { artifact_id: string }) => i.artifact_id)).toEqual([unknown, rec.artifact_id]);
    expect(batch.download_urls[0].error).toMatchObject({ code: 'artifact_not_found', status: 404 });
    expect(await (await fetch(batch.download_urls[1].download_url)).text()).toBe('a');
    const tooMany = await confirm.call('get_artifact_download_urls', {
      artifact_ids: Array.from({ length: 21 }, () => rec.artifact_id),
    });
    expect(tooMany._meta).toMatchObject({ code: 'invalid_request' });
    const missing = await confirm.call('get_artifact', { artifact_id: 'art_0000000000000000' });
    expect(missing._meta).toMatchObject({ status: 404, code: 'artifact_not_found', retry_hint: 'fix_arguments' });
  });

  it('presigned upload: request_upload_url, PUT, complete_upload (twice)', async () => {
    const ticket = data(await confirm.call('request_upload_url', { filename: 'big.bin', size_bytes: 4 }));
    expect(ticket.status).toBe('pending');
    const put = await fetch(ticket.upload_url, { method: 'PUT', headers: ticket.upload_headers, body: 'abcd' });
    expect(put.ok).toBe(true);
    const done = data(await confirm.call('complete_upload', { artifact_id: ticket.artifact_id }));
    expect(done).toMatchObject({ artifact_id: ticket.artifact_id, size_bytes: 4 });
    expect(data(await confirm.call('complete_upload', { artifact_id: ticket.artifact_id })).created_at).toBe(
      done.created_at,
    );
  });

  it('create_download_link, list_links, revoke_link, publish/unpublish, delete (confirm, repeat), seal and list_sessions', async () => {
    const rec = data(
      await confirm.call('store_artifact', { filename: 'p.md', content: 'IyBoaQ==', session_id: 'final' }),
    );
    const id = rec.artifact_id;
    const link = data(await confirm.call('create_download_link', { artifact_id: id, expires_in: 3600 }));
    expect(link.url).toContain('lnk_');
    const listed = data(await confirm.call('list_links', { artifact_id: id }));
    expect(listed.links.map((l: { link_id: string }) => l.link_id)).toEqual([link.link_id]);
    expect(data(await confirm.call('revoke_link', { link_id: link.link_id }))).toEqual({
      link_id: link.link_id,
      revoked: true,
    });
    expect((await fetch(link.url)).status).toBe(404);
    expect(data(await confirm.call('list_links', { artifact_id: id })).links).toEqual([]);
    expect((await confirm.call('revoke_link', { link_id: 'lnk_short' }))._meta).toMatchObject({
      code: 'invalid_request',
    });
    const page = data(await confirm.call('publish_artifact', { artifact_id: id, title: 'Hi' }));
    expect(page).toMatchObject({ visibility: 'unlisted', access: 'none' });
    expect(data(await confirm.call('publish_artifact', { artifact_id: id })).page_id).toBe(page.page_id);
    expect(data(await confirm.call('unpublish_artifact', { artifact_id: id }))).toEqual({
      page_id: page.page_id,
      unpublished: true,
    });
    expect(data(await confirm.call('unpublish_artifact', { artifact_id: page.page_id })).page_id).toBe(page.page_id);

    const unconfirmed = await confirm.call('delete_artifact', { artifact_id: id });
    expect(unconfirmed._meta).toMatchObject({ code: 'invalid_request' });
    expect(data(await confirm.call('get_artifact', { artifact_id: id })).artifact_id).toBe(id);
    expect(data(await confirm.call('delete_artifact', { artifact_id: id, confirm: true }))).toMatchObject({
      artifact_id: id,
      deleted: true,
    });
    expect(data(await confirm.call('delete_artifact', { artifact_id: id, confirm: true }))).toEqual({
      artifact_id: id,
      deleted: true,
      already_deleted: true,
    });

    expect(data(await confirm.call('seal_session', { session_id: 'final' }))).toMatchObject({ status: 'sealed' });
    const sessions = data(await confirm.call('list_sessions', { limit: 200 }));
    const final = sessions.sessions.find((s: { session_id: string }) => s.session_id === 'final');
    expect(final.is_sealed).toBe(true);
    const refused = await confirm.call('store_artifact', {
      filename: 'late.txt',
      content: 'YQ==',
      session_id: 'final',
    });
    expect(refused._meta).toMatchObject({ status: 409, code: 'session_sealed' });
    expect(refused._meta?.idempotency_key).toBeTypeOf('string');
    // stderr and stdout are separate pipes: the audit line may arrive just after the reply.
    await vi.waitFor(() =>
      expect(confirm.stderr()).toMatch(/cairn-mcp audit .*"tool":"delete_artifact".*"gating":"confirm"/),
    );
  });

  it('an authentication failure names the last four characters of the key', async () => {
    const bad = `ak_live_${'x'.repeat(28)}WXYZ`;
    const s = await connectMcp({ env: { ...env, CAIRN_API_KEY: bad }, cwd });
    try {
      const r = await s.call('whoami');
      expect(r.isError).toBe(true);
      expect(r._meta).toMatchObject({ status: 401, code: 'unauthorized', retry_hint: 'do_not_retry' });
      expect(JSON.stringify(r.content)).toContain('WXYZ');
      expect(JSON.stringify(r.content)).not.toContain('x'.repeat(28));
    } finally {
      await s.close();
    }
  });
});

describe('a suspended account', () => {
  it('is 401 unauthorized naming the suspension, not a bad key', async () => {
    const key = await srv.createTenant('stdio-suspended', 'pro');
    await srv.core.tenants.setSuspended(await srv.core.tenants.byName('stdio-suspended'), true);
    const s = await connectMcp({ env: { ...env, CAIRN_API_KEY: key }, cwd });
    try {
      const r = await s.call('whoami');
      expect(r.isError).toBe(true);
      expect(r._meta).toMatchObject({ status: 401, code: 'unauthorized', retry_hint: 'do_not_retry' });
      const text = JSON.stringify(r.content);
      expect(text).toMatch(/suspended/);
      expect(text).toMatch(/operator/);
      expect(text).not.toMatch(/check CAIRN_API_KEY/);
    } finally {
      await s.close();
    }
  });
});

describe('resources', () => {
  it('whoami, recent artifacts, records, bytes as text and as blob, and a session view', async () => {
    const png = data(
      await confirm.call('store_artifact', {
        filename: 'dot.png',
        content: PNG.toString('base64'),
        session_id: 'res',
      }),
    );
    const md = data(await confirm.call('store_artifact', { filename: 'r.md', content: 'IyBoaQ==', session_id: 'res' }));
    const { resources } = await confirm.client.listResources();
    expect(resources[0]?.uri).toBe('cairn://whoami');
    expect(resources.map((r) => r.uri)).toContain(`cairn://artifact/${md.artifact_id}`);
    const templates = (await confirm.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates).toEqual([
      'cairn://artifact/{artifact_id}',
      'cairn://artifact/{artifact_id}/bytes',
      'cairn://session/{session_id}',
    ]);

    const read = async (uri: string) =>
      (await confirm.client.readResource({ uri })).contents[0] as unknown as Record<string, string>;
    expect(JSON.parse((await read('cairn://whoami')).text ?? '').plan).toBe('pro');
    expect(JSON.parse((await read(`cairn://artifact/${png.artifact_id}`)).text ?? '').filename).toBe('dot.png');
    const text = await read(`cairn://artifact/${md.artifact_id}/bytes`);
    expect(text).toMatchObject({ mimeType: 'text/markdown', text: '# hi' });
    const blob = await read(`cairn://artifact/${png.artifact_id}/bytes`);
    expect(blob.mimeType).toBe('image/png');
    expect(Buffer.from(blob.blob ?? '', 'base64').equals(PNG)).toBe(true);
    const session = JSON.parse((await read('cairn://session/res')).text ?? '');
    expect(session).toMatchObject({ session_id: 'res', is_sealed: false, artifact_count: 2 });
    expect(session.artifacts).toHaveLength(2);
    await expect(read('cairn://session/nope')).rejects.toThrow(/No session nope/);
  });
});

describe('agent_id and the bytes preview cap', () => {
  it('agent_id is `mcp` when the client sends no usable name', async () => {
    for (const clientName of ['', '***']) {
      const s = await connectMcp({ env, cwd, clientName });
      try {
        const rec = data(await s.call('store_artifact', { filename: 'anon.txt', content: 'YQ==' }));
        expect(rec.agent_id, JSON.stringify(clientName)).toBe('mcp');
      } finally {
        await s.close();
      }
    }
  });

  it('an artifact over 100 MB is refused as a preview, clearly, without downloading it', async () => {
    // Seeded as a record only (its bytes never exist): the cap is checked before any download.
    const tenant = await srv.core.tenants.byName('main');
    const hash = 'b'.repeat(64);
    const size = BYTES_CAP + 1;
    const id = newArtifactId();
    const { artifactStore: store } = srv.core.deps;
    expect(await store.pinBlob(tenant.id, hash, size, Date.now(), { owner: 'seed', until: Date.now() + 60_000 })).toBe(
      'write',
    );
    await store.insertArtifact({
      artifact: {
        id,
        tenantId: tenant.id,
        filename: 'huge.bin',
        contentType: 'application/octet-stream',
        sizeBytes: size,
        contentHash: hash,
        metadata: {},
        sessionId: null,
        agentId: null,
        createdAt: Date.now(),
        expiresAt: null,
        deletedAt: null,
        status: 'active',
      },
      storageLimitBytes: Number.MAX_SAFE_INTEGER,
    });
    const refused = confirm.client.readResource({ uri: `cairn://artifact/${id}/bytes` });
    await expect(refused).rejects.toThrow(
      /huge\.bin is 104857601 bytes, over the 100 MB preview cap; use get_artifact_download_url/,
    );
    await expect(refused).rejects.toMatchObject({ data: { status: 413, code: 'file_too_large' } });
    // The record itself is still readable.
    const record = await confirm.client.readResource({ uri: `cairn://artifact/${id}` });
    expect(JSON.parse((record.contents[0] as { text: string }).text).size_bytes).toBe(size);
    await store.softDeleteArtifact(tenant.id, id, Date.now());
  });
});

describe('retries', () => {
  it('an idempotent tool survives one 500; create_download_link gets one attempt and an ambiguity reply', async () => {
    const proxy = await startFlakyProxy(srv.apiUrl);
    const s = await connectMcp({ env: { ...env, CAIRN_API_URL: proxy.url }, cwd, confirmations: true });
    try {
      const rec = data(await s.call('store_artifact', { filename: 'r.txt', content: 'YQ==' }));
      const get = `GET /v1/artifacts/${rec.artifact_id}`;
      proxy.failNext((m, p) => `${m} ${p}` === get);
      expect(data(await s.call('get_artifact', { artifact_id: rec.artifact_id })).artifact_id).toBe(rec.artifact_id);
      expect(proxy.seen.filter((k) => k === get)).toHaveLength(2);

      const post = `POST /v1/artifacts/${rec.artifact_id}/links`;
      proxy.failNext((m, p) => `${m} ${p}` === post);
      const r = await s.call('create_download_link', { artifact_id: rec.artifact_id });
      expect(r.isError).toBe(true);
      expect(r._meta).toMatchObject({ status: 500, retry_hint: 'verify_state' });
      expect(JSON.stringify(r.content)).toMatch(/ambiguous.*Do NOT retry/);
      expect(proxy.seen.filter((k) => k === post)).toHaveLength(1);
    } finally {
      await s.close();
      await proxy.close();
    }
  });
});

describe('startup', () => {
  it('a relative --allow-path root or a missing key exits with code 2', async () => {
    const rel = await runMcpExpectingExit(env, ['--allow-path', '/abs:relative/dir'], cwd);
    expect(rel.code).toBe(2);
    expect(rel.stderr).toMatch(/absolute/);
    const relEnv = await runMcpExpectingExit({ ...env, CAIRN_MCP_ALLOW_PATH: 'rel' }, [], cwd);
    expect(relEnv.code).toBe(2);
    const noKey = await runMcpExpectingExit({ HOME: home, PATH: process.env.PATH ?? '' }, [], cwd);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/CAIRN_API_KEY/);
    expect(noKey.stderr).toMatch(/`cairn login`/);
    const noProfile = await runMcpExpectingExit({ HOME: home, PATH: process.env.PATH ?? '' }, ['--profile', 'ci'], cwd);
    expect(noProfile.code).toBe(2);
    expect(noProfile.stderr).toMatch(/no API key in profile "ci" .*`cairn login --profile ci`/);
  });

  it('after `cairn login` it uses the saved profile (key and URL); CAIRN_API_KEY still wins', async () => {
    const own = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-mcp-login-')));
    try {
      const configDir = path.join(own, 'config');
      const bare = { HOME: own, PATH: process.env.PATH ?? '', CAIRN_CONFIG_DIR: configDir };
      const login = await runCairn(['login', '--key', srv.apiKey, '--url', srv.apiUrl], {
        cwd: own,
        configDir,
        apiUrl: 'http://127.0.0.1:9',
      });
      expect(login.code, login.stderr).toBe(0);
      // No key or URL in the host's environment: both come from the profile.
      const s = await connectMcp({ env: bare, cwd: own });
      try {
        expect(data(await s.call('whoami')).tenant_name).toBe('main');
        expect(s.stderr()).toMatch(/key …\S{4} from profile "default" in /);
      } finally {
        await s.close();
      }
      const otherKey = await srv.createTenant('mcp-env-first');
      const e = await connectMcp({ env: { ...bare, CAIRN_API_KEY: otherKey, CAIRN_API_URL: srv.apiUrl }, cwd: own });
      try {
        expect(data(await e.call('whoami')).tenant_name).toBe('mcp-env-first');
        expect(e.stderr()).toMatch(/from CAIRN_API_KEY/);
      } finally {
        await e.close();
      }
    } finally {
      await rm(own, { recursive: true, force: true });
    }
  });

  it('SERVICE_API_KEY works and CAIRN_MCP_ALLOW_PATH adds a root', async () => {
    const s = await connectMcp({
      env: { HOME: home, SERVICE_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl, CAIRN_MCP_ALLOW_PATH: extra },
      cwd,
      clientName: 'Claude Desktop',
    });
    try {
      const rec = data(await s.call('store_artifact', { filename: 'd.csv', path: path.join(extra, 'data.csv') }));
      expect(rec.agent_id).toBe('Claude-Desktop');
    } finally {
      await s.close();
    }
  });
});
