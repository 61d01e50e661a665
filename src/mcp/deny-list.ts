import path from 'node:path';

/**
 * The local MCP server's deny-list: credential files, refused however a path reaches them (as
 * written, through symlinks, inside or outside the allowed roots). Kinds, not a list of what a
 * probe tried: the secrets files of tools, every MCP host's config (where a Cairn key goes), every
 * AI CLI's login, the credential files of cloud and package tools, key stores, browser profile
 * stores, and any backup or editor copy of one of them.
 *
 * Patterns use `*` for any run of characters and compare without regard to case (macOS and
 * Windows file systems do not tell case apart). docs/mcp.md lists them; test/mcp/deny-list.test.ts
 * tries each one through the real server.
 */

/** A file's own name, in any folder. */
export const DENIED_NAMES = [
  // Secrets files of tools: `.env*`, netrc, git, npm/yarn, PyPI, PostgreSQL, MySQL, Vault, S3, boto.
  '.env*',
  'credentials.json',
  '.credentials*',
  '.netrc',
  '_netrc',
  '.git-credentials',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.pgpass',
  '.my.cnf',
  '.mylogin.cnf',
  '.vault-token',
  '.dockercfg',
  '.s3cfg',
  '.boto',
  '.htpasswd',
  'secrets.json',
  'secrets.yaml',
  'secrets.yml',
  'secrets.toml',
  '.secrets',
  // MCP host configs, where a Cairn key (or any server's) is written: Cursor, VS Code, LM Studio and
  // Amazon Q (`mcp.json`), a project's `.mcp.json`, Claude Code (`~/.claude.json`), Claude Desktop,
  // Windsurf, Cline and Roo Code.
  'mcp.json',
  '.mcp.json',
  '.claude.json',
  'claude_desktop_config.json',
  'mcp_config.json',
  '*mcp_settings.json',
  // AI CLI logins: Codex, opencode and others (`auth.json`, Composer's too), Gemini and Qwen
  // (`oauth_creds.json`), aider.
  'auth.json',
  'oauth_creds.json',
  'oauth-keys.env',
  // Cloud and tool credentials: Databricks, rclone, Gradle, Terraform (CLI config, state, variables),
  // Cloudflare Wrangler's local secrets, kubeconfigs, service-account key files.
  '.databrickscfg',
  'rclone.conf',
  'gradle.properties',
  '.terraformrc',
  'terraform.rc',
  '*.tfstate',
  '*.tfvars',
  '*.tfvars.json',
  '.dev.vars*',
  'kubeconfig',
  '*.kubeconfig',
  '*service-account*.json',
  '*service_account*.json',
  '*serviceaccount*.json',
  // Shell and REPL histories (bash, zsh, python, node, psql, mysql, …, fish).
  '.*_history',
  'fish_history',
  '.histfile',
  '.zhistory',
  // Private keys, certificates with keys, key stores, keychains.
  'id_*',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.ppk',
  '*.jks',
  '*.keystore',
  '*.kdbx',
  '*.keychain',
  '*.keychain-db',
  // Browser profile stores (saved passwords, their keys, cookies), wherever a profile is copied.
  'logins.json',
  'key3.db',
  'key4.db',
  'signons.sqlite',
  'cookies.sqlite',
  'Login Data',
  'Login Data For Account',
  'Cookies',
  'Web Data',
  'Local State',
];

/** Runs of folder names refused wherever they appear in a path: everything inside them. */
export const DENIED_SEGMENTS: string[][] = [
  // SSH, cloud, cluster and container credentials, GnuPG, pass.
  ['.ssh'],
  ['.aws'],
  ['.azure'],
  ['.config', 'gcloud'],
  ['.kube'],
  ['.docker'],
  ['.gnupg'],
  ['.password-store'],
  // More cloud CLIs: Oracle, Snowflake (both CLIs), fly.io, Wrangler, Hetzner, Netlify, Stripe, ngrok.
  ['.oci'],
  ['.snowflake'],
  ['.snowsql'],
  ['.fly'],
  ['.wrangler'],
  ['.config', 'hcloud'],
  ['.config', 'netlify'],
  ['.config', 'stripe'],
  ['.config', 'ngrok'],
  // sops' age keys (Linux and macOS places), GitHub CLI and hub, GitHub Copilot.
  ['sops', 'age'],
  ['.config', 'gh'],
  ['.config', 'hub'],
  ['.config', 'github-copilot'],
  ['.copilot'],
  // OS keychains and keyrings.
  ['Library', 'Keychains'],
  ['.local', 'share', 'keyrings'],
  ['.local', 'share', 'kwalletd'],
  // Browser profiles: Firefox, Chrome, Chromium, Edge, Brave, Safari (Linux, macOS, Windows places).
  ['.mozilla', 'firefox'],
  ['Firefox', 'Profiles'],
  ['.config', 'google-chrome'],
  ['.config', 'chromium'],
  ['Google', 'Chrome'],
  ['.config', 'microsoft-edge'],
  ['Microsoft', 'Edge'],
  ['BraveSoftware'],
  ['Library', 'Safari'],
  ['Library', 'Cookies'],
  // Cairn's own config folder.
  ['.config', 'cairn'],
];

/** Files named under a folder of that name, at any depth: the last name is the file's. */
export const DENIED_FILES: string[][] = [
  // Tokens of Terraform Cloud, Cargo, RubyGems, Bundler, Maven, NuGet, Helm, Hugging Face, doctl.
  ['.terraform.d', 'credentials*'],
  ['.cargo', 'credentials*'],
  ['.gem', 'credentials'],
  ['.bundle', 'config'],
  ['.m2', 'settings*.xml'],
  ['NuGet', 'NuGet.Config'],
  ['helm', 'repositories.yaml'],
  ['huggingface', 'token'],
  ['huggingface', 'stored_tokens'],
  ['doctl', 'config.yaml'],
  // MCP host configs inside a host's folder: Claude Code, Gemini CLI, Qwen Code, Codex, Continue,
  // Goose, Zed, and the user settings of VS Code, Cursor and Windsurf (`<app>/User/settings.json`).
  ['.claude', 'settings*.json'],
  ['.gemini', 'settings.json'],
  ['.qwen', 'settings.json'],
  ['.codex', 'config.toml'],
  ['.continue', 'config.*'],
  ['goose', 'config.yaml'],
  ['zed', 'settings.json'],
  ['User', 'settings.json'],
];

/**
 * Backups and editor copies: `name~` and `name.~1~` (Emacs), `#name#` and `.#name` (Emacs),
 * `.name.swp` and `.name.swo` (Vim), and `name` followed by `.bak`, `.backup`, `.old`, `.orig`,
 * `.save`, `.tmp`, `.cairn-backup` or a number (`.1`, as logrotate writes). A copy of a denied
 * file is refused as the file itself.
 */
const BACKUP_SUFFIX = /(?:~|\.~\d+~|\.(?:bak|backup|old|orig|save|tmp|cairn-backup|\d+))$/i;
const VIM_SWAP = /^\.(.+)\.sw[op]$/i;
const EMACS_AUTOSAVE = /^(?:#(.+)#|\.#(.+))$/;

/** The names `name` may be a copy of, itself first: `.npmrc.bak~` gives `.npmrc.bak~`, `.npmrc.bak`, `.npmrc`. */
export function originalNames(name: string): string[] {
  const names = [name];
  for (let current = name; ; ) {
    const vim = VIM_SWAP.exec(current);
    const emacs = EMACS_AUTOSAVE.exec(current);
    const next = vim ? vim[1] : emacs ? (emacs[1] ?? emacs[2]) : current.replace(BACKUP_SUFFIX, '');
    if (next === undefined || next === '' || next === current) return names;
    names.push(next);
    current = next;
  }
}

interface NamePattern {
  pattern: string;
  matches(name: string): boolean;
}

/** A shell-style name pattern (`*` only), matched whole and without regard to case. */
function namePattern(pattern: string): NamePattern {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const re = new RegExp(`^${source}$`, 'i');
  return { pattern, matches: (name) => re.test(name) };
}

const NAME_PATTERNS = DENIED_NAMES.map(namePattern);
const SEGMENT_PATTERNS = DENIED_SEGMENTS.map((seq) => seq.map(namePattern));
const FILE_PATTERNS = DENIED_FILES.map((seq) => seq.map(namePattern));

/** Whether the run `seq` matches at `at` the names of a path, each given with the names it may be a copy of. */
function runMatches(seq: NamePattern[], names: string[][], at: number): boolean {
  return seq.every(({ matches }, j) => (names[at + j] ?? []).some(matches));
}

const joined = (seq: NamePattern[]) => seq.map(({ pattern }) => pattern).join('/');

/**
 * Why `p` (an absolute path) is on the deny-list by its names, or null. Every name counts with
 * the names it may be a copy of (`.aws.old/credentials` is in `.aws`). Folders named on the list
 * by their place (`$CAIRN_CONFIG_DIR`, /etc) are checked by PathConfinement.
 */
export function deniedByName(p: string): string | null {
  const names = p
    .split(path.sep)
    .filter((s) => s !== '')
    .map(originalNames);
  const own = names[names.length - 1] ?? [];
  for (const { pattern, matches } of NAME_PATTERNS) {
    const original = own.find(matches);
    if (original === undefined) continue;
    return original === own[0]
      ? `files named ${pattern} are never read`
      : `it is a copy of ${original}, and files named ${pattern} are never read`;
  }
  for (const seq of SEGMENT_PATTERNS) {
    for (let i = 0; i + seq.length <= names.length; i++) {
      if (runMatches(seq, names, i)) return `paths through ${joined(seq)} are never read`;
    }
  }
  for (const seq of FILE_PATTERNS) {
    const at = names.length - seq.length;
    if (at >= 0 && runMatches(seq, names, at)) return `${joined(seq)} files are never read`;
  }
  return null;
}

/** The folders of DENIED_SEGMENTS without a pattern, as paths below the user's home (as the spec lists them). */
export const HOME_DENIED = DENIED_SEGMENTS.filter((seq) => !seq.some((name) => name.includes('*'))).map((seq) =>
  seq.join('/'),
);
