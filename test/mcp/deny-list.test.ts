import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomAlnum } from '../../src/core/ids.js';
import { DENIED_FILES, DENIED_NAMES, DENIED_SEGMENTS } from '../../src/mcp/deny-list.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { connectMcp, data, type McpSession } from './mcp-client.js';

/**
 * Every entry of the local MCP server's deny-list, tried through the built `cairn mcp` and a real
 * MCP client, with the server started in a home folder (its working directory, so an allowed
 * root): each credential file is refused with `path_refused` and nothing is stored, at the top
 * of the home folder and deeper down, while look-alike names that are not credentials are stored.
 * The entries come from src/mcp/deny-list.ts itself, so a new one is tried without editing this
 * file, and docs/mcp.md must list each. So are backups and editor copies of denied files, links
 * into denied places, and files whose bytes hold a Cairn API key or a private key.
 */

let srv: TestServer;
let home: string;
let outside: string;
let mcp: McpSession;

const KEY = `ak_live_${randomAlnum(32)}`;
const PLACEHOLDER = 'Set CAIRN_API_KEY=ak_live_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX in your shell.\n';
/** Files with innocent names whose bytes hold a secret. */
const SECRET_BYTES: Record<string, string> = {
  'notes/pasted.txt': `the key from chat: ${KEY}\n`,
  'projects/gcp/ci-1234.json': JSON.stringify({
    type: 'service_account',
    private_key: '-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n',
  }),
  'projects/deploy/deploy-key':
    '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----\n',
  // The key at the very end of 3 MiB, and across the boundary of the file's 64 KiB chunks.
  'logs/big.log': `${'x'.repeat(3 * 1024 * 1024)} ${KEY}`,
  'logs/split.log': `${'y'.repeat(64 * 1024 - 20)}${KEY} and more`,
};

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
  // The third probe's: MCP host configs, where the docs tell users to put their key.
  ['mcp.json', '.cursor/mcp.json'],
  ['.claude.json', '.claude.json'],
  ['claude_desktop_config.json', 'Library/Application Support/Claude/claude_desktop_config.json'],
  ['claude_desktop_config.json', '.config/Claude/claude_desktop_config.json'],
  ['.mcp.json', 'projects/app/.mcp.json'],
  ['mcp.json', 'projects/app/.vscode/mcp.json'],
  ['mcp.json', 'projects/app/.cursor/mcp.json'],
  ['mcp_config.json', '.codeium/windsurf/mcp_config.json'],
  ['.claude/settings*.json', '.claude/settings.json'],
  ['User/settings.json', '.config/Code/User/settings.json'],
  // AI CLI logins.
  ['.credentials*', '.claude/.credentials.json'],
  ['auth.json', '.codex/auth.json'],
  ['oauth_creds.json', '.gemini/oauth_creds.json'],
  ['auth.json', '.local/share/opencode/auth.json'],
  // Cloud and tool credentials.
  ['.databrickscfg', '.databrickscfg'],
  ['doctl/config.yaml', '.config/doctl/config.yaml'],
  ['rclone.conf', '.config/rclone/rclone.conf'],
  ['.m2/settings*.xml', '.m2/settings.xml'],
  ['gradle.properties', '.gradle/gradle.properties'],
  ['.snowflake', '.snowflake/connections.toml'],
  ['sops/age', '.config/sops/age/keys.txt'],
  ['*.tfstate', 'projects/infra/terraform.tfstate'],
  ['*.tfstate', 'projects/infra/terraform.tfstate.backup'],
  ['.dev.vars*', 'projects/worker/.dev.vars'],
  ['*service-account*.json', 'projects/gcp/ci-service-account.json'],
  // Backups and editor copies of denied files.
  ['.git-credentials', '.git-credentials.bak'],
  ['.npmrc', '.npmrc.bak'],
  ['.*_history', '.bash_history.bak'],
  ['.netrc', '.netrc~'],
  ['.netrc', '.netrc.orig'],
  ['.netrc', '.netrc.old'],
  ['.netrc', '..netrc.swp'],
  ['.netrc', '#.netrc#'],
  ['.npmrc', '.npmrc.cairn-backup'],
  ['.pypirc', '.pypirc.bak.1'],
  ['.aws', '.aws.old/credentials'],
  ['id_*', '.ssh-copy/id_ed25519.save'],
  // Browser profile stores.
  ['logins.json', '.mozilla/firefox/abc.default-release/logins.json'],
  ['Login Data', '.config/google-chrome/Default/Login Data'],
  ['Login Data', 'Library/Application Support/Google/Chrome/Profile 1/Login Data'],
  ['key4.db', 'backup/firefox-profile/key4.db'],
  // Every entry, at the top of home and two folders down.
  ...DENIED_NAMES.flatMap((name): [string, string][] => [
    [name, example(name)],
    [name, path.join('work', 'deeper', example(name))],
  ]),
  // A folder entry is tried with a file inside it; a file entry, as that file.
  ...[...DENIED_SEGMENTS.map((seq) => [...seq, 'token.txt']), ...DENIED_FILES].flatMap((seq): [string, string][] => {
    const entry = (seq.at(-1) === 'token.txt' ? seq.slice(0, -1) : seq).join('/');
    return [
      [entry, path.join(...seq.map(example))],
      [entry, path.join('work', 'deeper', ...seq.map(example))],
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
  // Beside the host configs and logins: transcripts and notes an agent is meant to store.
  'settings.json',
  'config.toml',
  'config.yaml',
  'auth.md',
  'mcp.md',
  'mcp-servers.txt',
  '.vscode/settings.json',
  '.claude/projects/app/session.jsonl',
  '.claude/CLAUDE.md',
  '.codex/sessions/rollout.jsonl',
  'keys.txt',
  'logins.csv',
  'cookies.txt',
  'secrets-guide.md',
  // Backups and copies of files that are not denied.
  'report.md.bak',
  'notes.txt~',
  'data.csv.1',
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
  await put('placeholder-key.md', PLACEHOLDER);
  for (const [relative, text] of Object.entries(SECRET_BYTES)) await put(relative, text);
  // Links inside the home folder (an allowed root) to denied places outside every root.
  outside = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-deny-outside-')));
  await mkdir(path.join(outside, '.ssh'));
  await writeFile(path.join(outside, '.ssh', 'id_ed25519'), 'PRIVATE');
  await mkdir(path.join(outside, '.aws'));
  await writeFile(path.join(outside, '.aws', 'credentials'), '[default]');
  await mkdir(path.join(home, 'links'));
  await symlink(path.join(outside, '.ssh', 'id_ed25519'), path.join(home, 'links', 'notes.txt'));
  await symlink(path.join(outside, '.aws'), path.join(home, 'links', 'config-folder'));
  await symlink(path.join(outside, '.ssh', 'id_missing'), path.join(home, 'links', 'dangling.txt'));
  mcp = await connectMcp({ env: { HOME: home, CAIRN_API_KEY: srv.apiKey, CAIRN_API_URL: srv.apiUrl }, cwd: home });
});

afterAll(async () => {
  await mcp?.close();
  await srv?.close();
  if (home) await rm(home, { recursive: true, force: true });
  if (outside) await rm(outside, { recursive: true, force: true });
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

describe('bytes and places that are secret whatever the name', () => {
  it.each(Object.keys(SECRET_BYTES))(
    'refuses a file whose bytes hold a key: ~/%s, storing nothing',
    async (relative) => {
      const r = await mcp.call('store_artifact', { filename: 'held.txt', path: relative });
      expect(r.isError, JSON.stringify(r.content)).toBe(true);
      expect(r._meta).toMatchObject({ status: 400, code: 'path_refused', retry_hint: 'do_not_retry' });
      expect(JSON.stringify(r.content)).toMatch(/its bytes hold (a Cairn API key|a private key)/);
      expect(data(await mcp.call('list_artifacts', { filename: 'held.txt' })).artifacts).toEqual([]);
    },
  );

  it('stores a key-shaped placeholder, as the docs write one', async () => {
    const stored = data(await mcp.call('store_artifact', { filename: 'placeholder.md', path: 'placeholder-key.md' }));
    expect(stored.size_bytes).toBe(Buffer.byteLength(PLACEHOLDER));
  });

  it.each(['links/notes.txt', 'links/config-folder/credentials', 'links/dangling.txt'])(
    'a link to a denied place outside the roots (~/%s) is refused as denied, not as outside the roots',
    async (relative) => {
      const r = await mcp.call('store_artifact', { filename: 'leak.txt', path: relative });
      expect(r._meta).toMatchObject({ code: 'path_refused', retry_hint: 'do_not_retry' });
      const text = JSON.stringify(r.content);
      expect(text).toMatch(/leads to a denied place/);
      expect(text).not.toMatch(/allow-path|outside the allowed roots/);
    },
  );
});

describe('docs/mcp.md', () => {
  it('lists every entry of the deny-list', async () => {
    const doc = await readFile(new URL('../../docs/mcp.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Path confinement'), doc.indexOf('## Destructive tools'));
    const missing = [...DENIED_NAMES, ...[...DENIED_SEGMENTS, ...DENIED_FILES].map((seq) => seq.join('/'))].filter(
      (entry) => !section.includes(`\`${entry}\``) && !section.includes(`\`${entry}/\``),
    );
    expect(missing).toEqual([]);
  });
});
