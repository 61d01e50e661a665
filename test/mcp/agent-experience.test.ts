import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolDef } from '../../src/mcp/context.js';
import { type GatingMode, hostedInstructions, localInstructions } from '../../src/mcp/instructions.js';
import { toolListing } from '../../src/mcp/server.js';
import { TOOLS } from '../../src/mcp/tools.js';
import { put } from '../helpers/e2e.js';
import { connectHttpMcp, type HttpMcp } from '../helpers/hosted.js';
import { api, startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, data, type McpSession } from './mcp-client.js';

/**
 * The agent-experience rules: what an agent that has never seen Cairn reads (instructions, tool
 * descriptions and schemas, error results) must be enough to get each call right, and must never
 * send it after a tool it cannot see. Static rules run over the tool table in every gating mode;
 * a table of bad calls runs against the stdio server (destructive tools hidden) and the hosted one.
 */

const ALL = TOOLS.map((t) => t.name);
const DESTRUCTIVE = TOOLS.filter((t) => t.destructive).map((t) => t.name);
const LOCAL_MODES: GatingMode[] = ['hidden', 'elicit', 'confirm', 'allowed'];
const visibleIn = (mode: GatingMode) => (mode === 'hidden' ? ALL.filter((n) => !DESTRUCTIVE.includes(n)) : ALL);

/** The tool names a text mentions (whole words: get_artifact is not inside get_artifact_download_url). */
const toolsNamedIn = (text: string) => ALL.filter((name) => new RegExp(`\\b${name}\\b`).test(text));

function listingsIn(mode: GatingMode): Tool[] {
  const visible = new Set(visibleIn(mode));
  return TOOLS.filter((t) => visible.has(t.name)).map((t) => toolListing(t, mode, (n) => visible.has(n)));
}

/** Arguments whose value no example helps with: an opaque token, or a secret the user picks. */
const NO_EXAMPLE = new Set(['cursor', 'password']);

type JsonSchema = { type?: string | string[]; enum?: unknown[]; const?: unknown; description?: string };

describe('tool descriptions and schemas', () => {
  for (const mode of LOCAL_MODES) {
    it(`${mode}: descriptions name only the tools this connection lists`, () => {
      const visible = visibleIn(mode);
      for (const tool of listingsIn(mode)) {
        const named = toolsNamedIn(`${tool.description} ${JSON.stringify(tool.inputSchema)}`);
        expect(
          named.filter((n) => !visible.includes(n)),
          tool.name,
        ).toEqual([]);
      }
    });
  }

  it('every argument is described, with an example unless it is a boolean, an enum or opaque', () => {
    for (const tool of listingsIn('allowed')) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
      for (const [name, schema] of Object.entries(properties)) {
        const where = `${tool.name}.${name}`;
        expect(schema.description, where).toBeTruthy();
        const closed = schema.type === 'boolean' || schema.enum !== undefined || schema.const !== undefined;
        if (!closed && !NO_EXAMPLE.has(name)) expect(schema.description, where).toMatch(/e\.g\./);
      }
    }
  });

  it('every number states its range, and sizes and lifetimes their unit', () => {
    for (const tool of listingsIn('allowed')) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
      for (const [name, schema] of Object.entries(properties)) {
        if (schema.type !== 'integer' && schema.type !== 'number') continue;
        const where = `${tool.name}.${name}`;
        expect(schema.description, where).toMatch(/\d+\s*-\s*\d+|at most|max/i);
        if (/bytes|expires|ttl/.test(name)) expect(schema.description, where).toMatch(/bytes|seconds/);
      }
      if (properties.limit) expect(tool.description, tool.name).toMatch(/max 200/);
      if (properties.ttl) expect(properties.ttl.description, tool.name).toMatch(/"3d"|"7d"/);
    }
  });

  it('schemas are self-contained (no $ref: some hosts do not resolve them)', () => {
    for (const tool of listingsIn('allowed')) expect(JSON.stringify(tool.inputSchema), tool.name).not.toContain('$ref');
  });

  it('the hosted listing offers no local-file argument; the local one does', () => {
    const store = TOOLS.find((t) => t.name === 'store_artifact') as ToolDef;
    const hosted = toolListing(store, 'allowed', () => true, 'hosted');
    const local = toolListing(store, 'allowed', () => true, 'local');
    expect(Object.keys(hosted.inputSchema.properties ?? {})).not.toContain('path');
    expect(hosted.description).not.toMatch(/`path`|on disk/);
    expect(Object.keys(local.inputSchema.properties ?? {})).toContain('path');
    expect(local.description).toMatch(/`path`/);
  });

  it("each tool's example call passes its own schema (it is shown in every argument error)", () => {
    for (const tool of TOOLS) {
      const parsed = tool.input.safeParse(tool.example);
      expect(parsed.success, `${tool.name}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });

  it('annotations match the effect: taking a page down is destructive; sealing says what it stops', () => {
    const byName = new Map<string, ToolDef>(TOOLS.map((t) => [t.name, t]));
    for (const name of [...DESTRUCTIVE, 'unpublish_artifact']) {
      expect(byName.get(name)?.annotations.destructiveHint, name).toBe(true);
      expect(byName.get(name)?.annotations.readOnlyHint, name).toBe(false);
    }
    const seal = byName.get('seal_session')?.description as string;
    expect(seal).toMatch(/can still be deleted/);
    expect(seal).toMatch(/no artifact can be stored/);
    expect(seal).not.toMatch(/for good:/);
  });
});

describe('instructions', () => {
  it('hidden: name the tools that are off, why, and what the user can do; promise no download links', () => {
    const text = localInstructions('hidden');
    for (const name of DESTRUCTIVE) expect(text).toContain(name);
    expect(text).toMatch(/elicitation/);
    expect(text).toContain('cairn mcp --allow-destructive');
    expect(text).toMatch(/publish_artifact/);
    expect(text).not.toMatch(/download links/);
    expect(text).toMatch(/stays up for anyone with its URL until unpublish_artifact/);
  });

  it('local: name the folders path uploads may read, or say there is none', () => {
    expect(localInstructions('elicit', ['/a', '/b'])).toMatch(
      /store_artifact's path reads files under \/a, \/b \(the user adds folders with --allow-path\)/,
    );
    expect(localInstructions('elicit')).toMatch(/reads no local folder/);
  });

  it('elicit, confirm, allowed: say how the destructive tools are confirmed (or that nobody does)', () => {
    expect(localInstructions('elicit')).toMatch(/ask the user to confirm each call/);
    expect(localInstructions('confirm')).toMatch(/requiresConfirmation/);
    expect(localInstructions('allowed')).toMatch(/--allow-destructive\. Nobody confirms them/);
    for (const mode of ['elicit', 'confirm', 'allowed'] as const) {
      expect(localInstructions(mode)).toMatch(/web pages or download links/);
    }
  });

  it('hosted: name the tools beyond the grant and the consent screen that lifts it', () => {
    const read = hostedInstructions('read');
    for (const name of ['store_artifact', 'publish_artifact', ...DESTRUCTIVE]) expect(read).toContain(name);
    expect(read).toMatch(/granted the Read permission only/);
    expect(read).toMatch(/choose Write or Destroy on the consent screen/);
    expect(hostedInstructions('write')).toMatch(/choose Destroy on the consent screen/);
    const write = hostedInstructions('write');
    expect(toolsNamedIn(write.split('\n\n')[1] ?? '').sort()).toEqual([...DESTRUCTIVE].sort());
    expect(hostedInstructions('destroy')).not.toMatch(/refused/);
  });
});

/** A bad call, what it must answer, and the fitting retry hints. */
interface BadCall {
  why: string;
  tool: string;
  args: (ids: Ids) => Record<string, unknown>;
  code: string;
  /** A piece of the text the agent must see (the id echoed, the shape, the example). */
  says?: RegExp;
  /** Only where the tool is listed (the stdio server here hides the destructive ones). */
  needsTool?: boolean;
}
interface Ids {
  stored: string;
  deleted: string;
}

const UNKNOWN = 'art_AAAAAAAAAAAAAAAA';
const SEALED = 'agent-sealed';
const BAD_CALLS: BadCall[] = [
  {
    why: 'a filename passed as an id',
    tool: 'get_artifact',
    args: () => ({ artifact_id: 'report.md' }),
    code: 'invalid_request',
    says: /art_ followed by 16 letters or digits/,
  },
  {
    why: 'an unknown id',
    tool: 'get_artifact',
    args: () => ({ artifact_id: UNKNOWN }),
    code: 'artifact_not_found',
    says: new RegExp(UNKNOWN),
  },
  {
    why: 'an unknown argument name',
    tool: 'get_artifact',
    args: (ids) => ({ id: ids.stored }),
    code: 'invalid_request',
    says: /unknown argument "id"; get_artifact takes artifact_id/,
  },
  {
    why: 'a deleted artifact',
    tool: 'get_artifact_download_url',
    args: (ids) => ({ artifact_id: ids.deleted }),
    code: 'artifact_already_deleted',
  },
  {
    why: 'neither text, content nor path',
    tool: 'store_artifact',
    args: () => ({ filename: 'x.txt' }),
    code: 'invalid_request',
    says: /Example of a correct call: store_artifact \{"filename":"report.md","text"/,
  },
  {
    why: 'a ttl in words',
    tool: 'store_artifact',
    args: () => ({ filename: 'x.txt', content: 'aGk=', ttl: '3 days' }),
    code: 'invalid_request',
    says: /"7d"/,
  },
  {
    why: 'content that is not base64',
    tool: 'store_artifact',
    args: () => ({ filename: 'x.txt', content: 'not base64!' }),
    code: 'invalid_request',
  },
  {
    why: 'plain text passed as base64 content',
    tool: 'store_artifact',
    args: () => ({ filename: 'x.txt', content: 'hello' }),
    code: 'invalid_request',
    says: /pass it as `text`/,
  },
  {
    why: 'storing into a sealed session',
    tool: 'store_artifact',
    args: () => ({ filename: 'late.txt', text: 'late', session_id: SEALED }),
    code: 'session_sealed',
    says: /another session_id/,
  },
  {
    why: 'a page too large',
    tool: 'list_artifacts',
    args: () => ({ limit: 500 }),
    code: 'invalid_request',
    says: /list_artifacts \{/,
  },
  {
    why: 'a made-up cursor',
    tool: 'list_sessions',
    args: () => ({ cursor: 'page-2' }),
    code: 'invalid_request',
    says: /next_cursor/,
  },
  {
    why: 'a session label with a space',
    tool: 'list_artifacts',
    args: () => ({ session_id: 'my session' }),
    code: 'invalid_request',
    says: /e\.g\. "run-2026-11-26"/,
  },
  {
    why: 'publishing an unknown artifact',
    tool: 'publish_artifact',
    args: () => ({ artifact_id: UNKNOWN }),
    code: 'artifact_not_found',
    says: new RegExp(UNKNOWN),
  },
  {
    why: 'taking down a page that does not exist',
    tool: 'unpublish_artifact',
    args: () => ({ artifact_id: 'pg_AAAAAAAAAAAAAAAA' }),
    code: 'artifact_not_found',
    says: /pg_AAAAAAAAAAAAAAAA/,
  },
  {
    why: 'a share link for longer than 30 days',
    tool: 'create_download_link',
    args: (ids) => ({ artifact_id: ids.stored, ttl: '45d' }),
    code: 'invalid_request',
    says: /30 days/,
    needsTool: true,
  },
  {
    why: 'a share link lifetime in words',
    tool: 'create_download_link',
    args: (ids) => ({ artifact_id: ids.stored, ttl: '3 days' }),
    code: 'invalid_request',
    says: /"3d"/,
    needsTool: true,
  },
  {
    why: 'a deletion without confirm',
    tool: 'delete_artifact',
    args: (ids) => ({ artifact_id: ids.stored }),
    code: 'invalid_request',
    needsTool: true,
  },
  {
    why: 'sealing a session no artifact names',
    tool: 'seal_session',
    args: () => ({ session_id: 'never-used' }),
    code: 'session_not_found',
    says: /list_sessions/,
    needsTool: true,
  },
];

const texts = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** The hints that fit a status: change the call for a request error, stop for a refusal. */
const FITTING: Record<string, string[]> = {
  '400': ['fix_arguments'],
  '404': ['fix_arguments'],
  '403': ['do_not_retry'],
  '409': ['fix_arguments'],
  '410': ['do_not_retry'],
};

function checkError(r: CallToolResult, bad: BadCall, visible: string[]): void {
  const where = `${bad.tool}: ${bad.why}`;
  expect(r.isError, where).toBe(true);
  const text = r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  expect(r._meta?.code, `${where}: ${text}`).toBe(bad.code);
  expect(FITTING[String(r._meta?.status)], `${where}: status ${r._meta?.status}`).toContain(r._meta?.retry_hint);
  if (bad.says) expect(text, where).toMatch(bad.says);
  // A next step: a tool it can call, or an argument of this one to change.
  const args = Object.keys(TOOLS.find((t) => t.name === bad.tool)?.input.shape ?? {});
  const named = toolsNamedIn(text);
  const names = [...named, ...args.filter((a) => new RegExp(`\\b${a}\\b`).test(text))];
  expect(names.length, `${where}: no next step in ${text}`).toBeGreaterThan(0);
  expect(
    named.filter((n) => !visible.includes(n)),
    `${where}: names a tool the client cannot see`,
  ).toEqual([]);
}

let srv: TestServer;
let base: string;
let stdio: McpSession;
let hosted: HttpMcp;
const ids: Record<'stdio' | 'hosted', Ids> = {
  stdio: { stored: '', deleted: '' },
  hosted: { stored: '', deleted: '' },
};

beforeAll(async () => {
  srv = await startTestServer();
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-agent-')));
  stdio = await connectMcp({ env: { HOME: base, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl }, cwd: base });
  hosted = await connectHttpMcp(srv.apiUrl, srv.apiKey);
  await put(srv.apiUrl, srv.apiKey, 'sealed in', { session_id: SEALED });
  expect((await api(srv.apiUrl, srv.apiKey, 'POST', `/v1/sessions/${SEALED}/seal`)).status).toBe(200);
  for (const [name, session] of [
    ['stdio', stdio],
    ['hosted', hosted],
  ] as const) {
    const stored = data(await session.call('store_artifact', { filename: 'kept.txt', content: 'aGk=' }));
    const doomed = data(await session.call('store_artifact', { filename: 'gone.txt', content: 'Ynll' }));
    expect((await api(srv.apiUrl, srv.apiKey, 'DELETE', `/v1/artifacts/${doomed.artifact_id}`)).status).toBe(200);
    ids[name] = { stored: stored.artifact_id, deleted: doomed.artifact_id };
  }
});
afterAll(async () => {
  await stdio?.close();
  await hosted?.close();
  await srv?.close();
  await rm(base, { recursive: true, force: true });
});

describe('bad calls: every error carries code, a fitting retry_hint and a next step', () => {
  it('stdio, destructive tools hidden: the instructions say so, and no error names a hidden tool', async () => {
    expect(stdio.client.getInstructions()).toBe(localInstructions('hidden', [base]));
    const visible = (await stdio.client.listTools()).tools.map((t) => t.name);
    expect(visible.sort()).toEqual(visibleIn('hidden').sort());
    for (const bad of BAD_CALLS.filter((b) => !b.needsTool)) {
      checkError(await stdio.call(bad.tool, bad.args(ids.stdio)), bad, visible);
    }
    // A hidden tool called by name is refused without naming any tool it cannot see.
    const refused = await stdio.call('create_download_link', { artifact_id: ids.stdio.stored, ttl: '3d' });
    expect(JSON.stringify(refused.content)).toContain(`cairn link ${ids.stdio.stored} --expires 3d`);
    // Unvalidated arguments never reach a command the user may paste into a shell.
    const hostile = await stdio.call('delete_artifact', { artifact_id: 'x; rm -rf ~', confirm: true });
    expect(JSON.stringify(hostile.content)).toContain('`cairn rm ART_ID`');
    expect(JSON.stringify(hostile.content)).not.toContain('rm -rf');
    checkError(
      refused,
      { why: 'hidden', tool: 'create_download_link', args: () => ({}), code: 'destructive_tools_disabled' },
      visible,
    );
  });

  it('hosted (every tool listed)', async () => {
    expect(hosted.client.getInstructions()).toBe(hostedInstructions('destroy'));
    const visible = (await hosted.client.listTools()).tools.map((t) => t.name);
    expect(visible.sort()).toEqual([...ALL].sort());
    for (const bad of BAD_CALLS) checkError(await hosted.call(bad.tool, bad.args(ids.hosted)), bad, visible);
  });
});

describe('instructions as each host receives them at initialize', () => {
  it('stdio: a host that elicits, one with confirmations, and --allow-destructive each get their own', async () => {
    const env = { HOME: base, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl };
    const hosts: [Partial<Parameters<typeof connectMcp>[0]>, GatingMode][] = [
      [{ elicitation: () => ({ action: 'decline' }) }, 'elicit'],
      [{ confirmations: true }, 'confirm'],
      [{ args: ['--allow-destructive'] }, 'allowed'],
    ];
    for (const [opts, mode] of hosts) {
      const s = await connectMcp({ env, cwd: base, ...opts });
      try {
        expect(s.client.getInstructions(), mode).toBe(localInstructions(mode, [base]));
      } finally {
        await s.close();
      }
    }
  });
});

describe('durations, retries and usage the way agents ask for them', () => {
  it('create_download_link takes ttl "3d" (stdio with --allow-destructive, and hosted)', async () => {
    const s = await connectMcp({
      env: { HOME: base, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl },
      cwd: base,
      args: ['--allow-destructive'],
    });
    try {
      for (const [session, id] of [
        [s, ids.stdio.stored],
        [hosted, ids.hosted.stored],
      ] as const) {
        const link = data(await session.call('create_download_link', { artifact_id: id, ttl: '3d' }));
        expect(Date.parse(link.expires_at) - Date.parse(link.created_at)).toBe(3 * 86_400_000);
        const seconds = data(await session.call('create_download_link', { artifact_id: id, expires_in: 3600 }));
        expect(Date.parse(seconds.expires_at) - Date.parse(seconds.created_at)).toBe(3_600_000);
      }
    } finally {
      await s.close();
    }
  });

  for (const name of ['stdio', 'hosted'] as const) {
    it(`${name}: a repeat with the caller's key is marked replayed; a keyless repeat names the earlier copy`, async () => {
      const session = name === 'stdio' ? stdio : hosted;
      const args = { filename: `retry-${name}.md`, content: 'IyBSZXBvcnQK', session_id: `retry-${name}` };
      const key = `retry-${name}-${Date.now()}`;
      const first = await session.call('store_artifact', { ...args, idempotency_key: key });
      expect(first._meta).toEqual({ idempotency_key: key });
      const again = await session.call('store_artifact', { ...args, idempotency_key: key });
      expect(data(again).artifact_id).toBe(data(first).artifact_id);
      expect(again._meta).toEqual({ idempotency_key: key, replayed: true });
      // Said in the text too (hosts often show the model only the content, not _meta).
      expect(texts(again)).toMatch(/Replayed: .*nothing new was stored/);
      const reused = await session.call('store_artifact', {
        filename: 'other.md',
        text: 'other',
        idempotency_key: key,
      });
      expect(reused._meta).toEqual({ idempotency_key: key, replayed: true });
      expect(texts(reused)).toMatch(/used before for another file \("retry-/);

      // Without a key, the same bytes, filename and session again: stored, and the earlier copy named.
      const keyless = await session.call('store_artifact', args);
      expect(data(keyless).artifact_id).not.toBe(data(first).artifact_id);
      expect(keyless._meta?.possible_duplicate_of).toBe(data(first).artifact_id);
      expect(keyless._meta?.replayed).toBeUndefined();
      expect(texts(keyless)).toContain(`was stored in the last 24 hours: ${data(first).artifact_id}`);
      // Another session, or other bytes, is not a duplicate.
      const elsewhere = await session.call('store_artifact', { ...args, session_id: `other-${name}` });
      expect(elsewhere._meta?.possible_duplicate_of).toBeUndefined();
      const changed = await session.call('store_artifact', { ...args, content: 'IyBSZXBvcnQgMgo=' });
      expect(changed._meta?.possible_duplicate_of).toBeUndefined();
    });
  }

  it('text is stored as UTF-8, as is, on both servers', async () => {
    for (const session of [stdio, hosted]) {
      const stored = data(await session.call('store_artifact', { filename: 'note.md', text: '# Nota\nCafé ✓\n' }));
      expect(stored.size_bytes).toBe(Buffer.byteLength('# Nota\nCafé ✓\n'));
      const back = await fetch(
        data(await session.call('get_artifact_download_url', { artifact_id: stored.artifact_id })).download_url,
      );
      expect(await back.text()).toBe('# Nota\nCafé ✓\n');
    }
  });

  it('whoami answers how much is left, on both servers', async () => {
    for (const session of [stdio, hosted]) {
      const me = data(await session.call('whoami'));
      expect(me.usage_storage_bytes_remaining).toBe(me.plan_storage_limit_bytes - me.usage_storage_bytes);
      expect(me.usage_requests_remaining_month).toBe(me.plan_requests_limit_month - me.usage_requests_month);
      expect(me.requests_month_resets_at).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
      expect(me.rate_limit_unit).toBe('requests_per_second');
    }
  });
});

describe('docs/mcp.md', () => {
  it('shows the instructions each connection receives, word for word', async () => {
    const doc = await readFile(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
    expect(doc).toContain(localInstructions('hidden', ['/home/you/project']));
    const second = (text: string) => text.split('\n\n')[1] as string;
    for (const mode of ['elicit', 'confirm', 'allowed'] as const)
      expect(doc).toContain(second(localInstructions(mode)));
    for (const tier of ['read', 'write', 'destroy'] as const) expect(doc).toContain(second(hostedInstructions(tier)));
  });
});
