import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DENIED_NAMES, DENIED_SEGMENTS } from '../../src/mcp/paths.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, data, type McpSession } from './mcp-client.js';

/**
 * Every entry of the local MCP server's deny-list, tried through the built `cairn mcp` and a real
 * MCP client, with the server started in a home folder (its working directory, so an allowed
 * root): each credential file is refused with `path_refused` and nothing is stored, at the top
 * of the home folder and deeper down, while look-alike names that are not credentials are stored.
 * The entries come from src/mcp/paths.ts itself, so a new one is tried without editing this file,
 * and docs/mcp.md must list each.
 */

let srv: TestServer;
let home: string;
let mcp: McpSession;

/** A concrete name for a pattern: `*` becomes `example`. */
const example = (pattern: string) => pattern.replaceAll('*', 'example');

/** Paths under the home folder, one or more per deny-list entry, with the entry they test. */
const denied: [entry: string, relative: string][] = [
  // The files the probe stored before the list covered them, and their usual neighbours.
  ['.netrc', '.netrc'],
  ['.git-credentials', '.git-credentials'],
  ['.npmrc', '.npmrc'],
  ['.config/gh', '.config/gh/hosts.yml'],
  ['.*_history', '.bash_history'],
  ['.*_history', '.zsh_history'],
  ['.*_history', '.python_history'],
  ['.*_history', '.node_repl_history'],
  ['.*_history', '.psql_history'],
  ['fish_history', '.local/share/fish/fish_history'],
  ['.docker', '.docker/config.json'],
  ['.terraform.d/credentials*', '.terraform.d/credentials.tfrc.json'],
  ['id_*', '.ssh-backup/id_ed25519'],
  ['id_*', 'projects/deploy/id_rsa'],
  ['*.pem', 'projects/tls/server.PEM'],
  ['*.keychain-db', 'Library/Keychains/login.keychain-db'],
  ['.local/share/keyrings', '.local/share/keyrings/login.keyring'],
  ['.gnupg', '.gnupg/private-keys-v1.d/key.key'],
  // Every entry, at the top of home and two folders down.
  ...DENIED_NAMES.flatMap((name): [string, string][] => [
    [name, example(name)],
    [name, path.join('work', 'deeper', example(name))],
  ]),
  ...DENIED_SEGMENTS.flatMap((seq): [string, string][] => {
    const entry = seq.join('/');
    const inside = seq.map(example);
    // A folder entry is tried with a file inside it; an entry that ends in a file name, as that file.
    const file = seq.at(-1)?.includes('*') || entry === '.gem/credentials' ? inside : [...inside, 'token.txt'];
    return [
      [entry, path.join(...file)],
      [entry, path.join('work', 'deeper', ...file)],
    ];
  }),
];

/** Names close to the entries that are not credentials, stored as usual. */
const allowed = [
  'notes.txt',
  'history.md',
  'my_history.txt',
  'identity.txt',
  'keys.csv',
  'pem-format.md',
  'netrc.md',
  'environment.txt',
  '.config/ghost/settings.json',
  '.terraform.d/plugins/readme.txt',
  'docker/Dockerfile',
];

async function put(relative: string, text: string): Promise<void> {
  const file = path.join(home, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

beforeAll(async () => {
  srv = await startTestServer();
  home = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-deny-home-')));
  for (const [, relative] of denied) await put(relative, `secret in ${relative}`);
  for (const relative of allowed) await put(relative, `fine: ${relative}`);
  mcp = await connectMcp({ env: { HOME: home, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl }, cwd: home });
});

afterAll(async () => {
  await mcp?.close();
  await srv?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

describe('store_artifact with a server started in a home folder', () => {
  it.each(denied)('refuses %s: ~/%s', async (_entry, relative) => {
    const r = await mcp.call('store_artifact', { filename: 'leak.txt', path: relative });
    expect(r.isError, JSON.stringify(r.content)).toBe(true);
    // A secret's file is not an argument to fix: the agent is told not to send it another way.
    expect(r._meta).toMatchObject({ status: 400, code: 'path_refused', retry_hint: 'do_not_retry' });
    expect(JSON.stringify(r.content)).toMatch(/never read|deny-list/);
    expect(JSON.stringify(r.content)).toMatch(/Do not send its contents another way/);
    // By absolute path too.
    const abs = await mcp.call('store_artifact', { filename: 'leak.txt', path: path.join(home, relative) });
    expect(abs._meta).toMatchObject({ code: 'path_refused' });
  });

  it('stored none of them', async () => {
    expect(data(await mcp.call('list_artifacts', { filename: 'leak.txt' })).artifacts).toEqual([]);
  });

  it.each(allowed)('stores a name that is not a credential: ~/%s', async (relative) => {
    const stored = data(await mcp.call('store_artifact', { filename: 'fine.txt', path: relative }));
    expect(stored.size_bytes).toBe(Buffer.byteLength(`fine: ${relative}`));
  });
});

describe('docs/mcp.md', () => {
  it('lists every entry of the deny-list', async () => {
    const doc = await readFile(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Path confinement'), doc.indexOf('## Destructive tools'));
    const missing = [...DENIED_NAMES, ...DENIED_SEGMENTS.map((seq) => seq.join('/'))].filter(
      (entry) => !section.includes(`\`${entry}\``) && !section.includes(`\`${entry}/\``),
    );
    expect(missing).toEqual([]);
  });
});
