import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, data, type McpSession } from './mcp-client.js';

/**
 * Path confinement and destructive-tool gating end to end: the built `cairn mcp` through the MCP
 * SDK's client, as an agent would reach them (test/mcp/paths.test.ts checks the checker itself).
 *
 *   home/.ssh/id_ed25519   home/outside.txt   home/outside-dir/file.txt
 *   home/project/          the server's working directory
 *   home/project-evil/     a sibling of the working directory sharing its prefix
 *   allowed/               an --allow-path root;  allowed-evil/  its prefix sibling
 */

let srv: TestServer;
let base: string;
let home: string;
let cwd: string;
let allowed: string;
let env: Record<string, string>;
let mcp: McpSession;

async function put(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

beforeAll(async () => {
  srv = await startTestServer();
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-mcp-confine-')));
  home = path.join(base, 'home');
  cwd = path.join(home, 'project');
  allowed = path.join(base, 'allowed');
  await put(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
  await put(path.join(home, 'outside.txt'), 'outside');
  await put(path.join(home, 'outside-dir', 'file.txt'), 'outside dir');
  await put(path.join(home, 'project-evil', 'secret.txt'), 'evil');
  await put(path.join(base, 'allowed-evil', 'x.txt'), 'evil too');
  await put(path.join(allowed, 'ok.csv'), 'a,b\n');
  await put(path.join(cwd, 'report.md'), '# fine');
  await put(path.join(cwd, '.env'), 'SECRET=1');
  await put(path.join(cwd, '.env.local'), 'SECRET=2');
  await put(path.join(cwd, 'deep', 'x', 'credentials.json'), '{}');
  await symlink(path.join(home, 'outside.txt'), path.join(cwd, 'link-out'));
  await symlink(path.join(home, '.ssh', 'id_ed25519'), path.join(cwd, 'link-key'));
  await symlink(path.join(home, 'outside-dir'), path.join(cwd, 'linkdir'));
  await symlink(path.join(cwd, '.env'), path.join(cwd, 'innocent-env'));
  await symlink(path.join(allowed, 'ok.csv'), path.join(cwd, 'link-allowed'));
  await symlink(path.join(home, 'missing.txt'), path.join(cwd, 'link-nowhere'));
  await link(path.join(home, '.ssh', 'id_ed25519'), path.join(cwd, 'hard.txt'));
  execFileSync('mkfifo', [path.join(cwd, 'pipe')]);
  env = { HOME: home, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl };
  mcp = await connectMcp({ env, cwd, args: ['--allow-path', allowed] });
});

afterAll(async () => {
  await mcp?.close();
  await srv?.close();
  await rm(base, { recursive: true, force: true });
});

describe('path escapes through the MCP client are refused, and nothing is stored', () => {
  const attempts: [string, () => string][] = [
    ['.. walk to a denied file', () => '../.ssh/id_ed25519'],
    ['.. walk to a plain file outside', () => '../outside.txt'],
    ['.. walk through a subfolder', () => 'deep/../../outside.txt'],
    ['working-directory prefix sibling', () => '../project-evil/secret.txt'],
    ['--allow-path prefix sibling', () => path.join(base, 'allowed-evil', 'x.txt')],
    ['symlink to a file outside', () => 'link-out'],
    ['symlink to a denied file', () => 'link-key'],
    ['symlink to .env under another name', () => 'innocent-env'],
    ['symlinked parent folder', () => 'linkdir/file.txt'],
    ['.env', () => '.env'],
    ['.env.local', () => '.env.local'],
    ['credentials.json at depth', () => 'deep/x/credentials.json'],
    ['~/.ssh/id_ed25519 by absolute path', () => path.join(home, '.ssh', 'id_ed25519')],
    ['hard link to a denied file', () => 'hard.txt'],
    ['a FIFO (must not hang)', () => 'pipe'],
    ['/etc/passwd', () => '/etc/passwd'],
    ['/dev/zero', () => '/dev/zero'],
  ];
  for (const [label, p] of attempts) {
    it(label, async () => {
      const r = await mcp.call('store_artifact', { filename: 'escape.txt', path: p() });
      expect(r.isError).toBe(true);
      expect(r._meta).toMatchObject({ status: 400, code: 'path_refused' });
      // Deny-listed files: do not retry (nor send them another way); the rest: change the path.
      const denied = /deny-list|never read/.test(JSON.stringify(r.content));
      expect(r._meta?.retry_hint).toBe(denied ? 'do_not_retry' : 'fix_arguments');
      expect(JSON.stringify(r.content)).toMatch(/refused|no readable file/);
    });
  }

  it('stored none of them', async () => {
    expect(data(await mcp.call('list_artifacts', { filename: 'escape.txt' })).artifacts).toEqual([]);
  });

  it('while files inside the roots pass, a symlink between two roots included', async () => {
    for (const [p, size] of [
      ['report.md', 6],
      [path.join(allowed, 'ok.csv'), 4],
      ['link-allowed', 4],
    ] as const) {
      expect(data(await mcp.call('store_artifact', { filename: 'inside.txt', path: p })).size_bytes).toBe(size);
    }
  });
});

describe('a refusal outside the roots does not tell whether the file exists', () => {
  const pairs: [string, string, string][] = [
    ['by absolute path', path.join('HOME', 'outside.txt'), path.join('HOME', 'missing.txt')],
    ['by .. walk', '../outside.txt', '../missing.txt'],
    [
      'in a folder outside, or a missing folder',
      path.join('HOME', 'outside-dir', 'file.txt'),
      path.join('HOME', 'no-dir', 'file.txt'),
    ],
    ['through a symlink in the root, or a dangling one', 'link-out', 'link-nowhere'],
    ['through a symlinked folder', 'linkdir/file.txt', 'linkdir/missing.txt'],
  ];
  /** The tool's answer with the requested path taken out of it. */
  const answer = async (p: string) => {
    const r = await mcp.call('store_artifact', { filename: 'probe.txt', path: p });
    const text = r.content[0]?.type === 'text' ? r.content[0].text : '';
    // Each call has its own idempotency key; the rest of _meta must be the same.
    const { idempotency_key: _key, ...meta } = r._meta ?? {};
    return { meta, text: text.replace(p, '<path>') };
  };
  it.each(pairs)('%s', async (_label, there, notThere) => {
    const [a, b] = [there.replace('HOME', home), notThere.replace('HOME', home)];
    const existing = await answer(a);
    expect(existing.meta).toMatchObject({ code: 'path_refused' });
    expect(existing.text).toMatch(/outside the allowed roots/);
    expect(await answer(b)).toEqual(existing);
  });
});

describe('destructive tools stay gated whatever the environment or a config file says', () => {
  it('--allow-destructive from env variables or the config file is ignored', async () => {
    const configDir = path.join(base, 'cairn-config');
    await put(
      path.join(configDir, 'config.json'),
      JSON.stringify({
        allow_destructive: true,
        allowDestructive: true,
        mcp: { allow_destructive: true },
        profiles: { default: { allow_destructive: true } },
      }),
    );
    const s = await connectMcp({
      env: {
        ...env,
        CAIRN_CONFIG_DIR: configDir,
        CAIRN_ALLOW_DESTRUCTIVE: '1',
        CAIRN_MCP_ALLOW_DESTRUCTIVE: 'true',
        ALLOW_DESTRUCTIVE: '1',
        npm_config_allow_destructive: 'true',
      },
      cwd,
    });
    try {
      const names = (await s.client.listTools()).tools.map((t) => t.name);
      for (const d of ['create_download_link', 'revoke_link', 'delete_artifact', 'seal_session'])
        expect(names).not.toContain(d);
      const r = await s.call('seal_session', { session_id: 'env-gated' });
      expect(r._meta).toMatchObject({ status: 403, code: 'destructive_tools_disabled' });
      expect(s.stderr()).toMatch(/destructive tools only with host confirmation/);
    } finally {
      await s.close();
    }
  });
});
