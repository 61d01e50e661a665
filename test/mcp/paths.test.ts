import { execFileSync } from 'node:child_process';
import { link, mkdir, mkdtemp, realpath, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deniedByName, originalNames } from '../../src/mcp/deny-list.js';
import {
  isInside,
  PathConfinement,
  PathRefusedError,
  parseAllowPaths,
  RelativeRootError,
} from '../../src/mcp/paths.js';

// Layout (all under a fresh temp dir; nothing depends on the real HOME):
//   home/.ssh/id_ed25519  home/.aws/credentials  home/.config/cairn/config.json  home/outside.txt
//   home/project/          <- the server's cwd
//   home/project-evil/     <- a sibling sharing the prefix
//   extra/                 <- an --allow-path root
//   cfg/                   <- $CAIRN_CONFIG_DIR, inside the project on purpose
let base: string;
let home: string;
let cwd: string;
let extra: string;
let conf: PathConfinement;
let socketServer: Server;

async function put(file: string, text = 'x'): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'cairn-paths-')));
  home = path.join(base, 'home');
  cwd = path.join(home, 'project');
  extra = path.join(base, 'extra');
  await put(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
  await put(path.join(home, '.aws', 'credentials'), 'aws');
  await put(path.join(home, '.ssh', 'config'), 'Host *');
  await put(path.join(home, '.config', 'cairn', 'config.json'), '{}');
  await put(path.join(home, '.config', 'gcloud', 'creds.db'), 'g');
  await put(path.join(home, 'outside.txt'), 'outside');
  await put(path.join(home, 'outside-dir', 'file.txt'), 'outside dir');
  await put(path.join(home, 'project-evil', 'secret.txt'), 'evil');
  await put(path.join(cwd, 'report.md'), '# report');
  await put(path.join(cwd, 'sub', 'notes.txt'), 'notes');
  await put(path.join(cwd, 'environment.txt'), 'fine');
  await put(path.join(cwd, 'my.env'), 'fine too');
  await put(path.join(cwd, '.env'), 'SECRET=1');
  await put(path.join(cwd, '.env.local'), 'SECRET=2');
  await put(path.join(cwd, 'deep', 'a', 'b', 'credentials.json'), '{}');
  await put(path.join(cwd, 'deep', 'CREDENTIALS.JSON'), '{}');
  await put(path.join(cwd, '.ssh', 'key'), 'k');
  await put(path.join(cwd, 'cfg', 'config.json'), '{}');
  await put(path.join(extra, 'data.csv'), 'a,b');
  await symlink(path.join(home, 'outside.txt'), path.join(cwd, 'link-out'));
  await symlink(path.join(home, '.ssh', 'id_ed25519'), path.join(cwd, 'link-key'));
  await symlink(path.join(home, 'outside-dir'), path.join(cwd, 'linkdir'));
  await symlink(path.join(cwd, 'link-out'), path.join(cwd, 'chain'));
  await symlink(path.join(extra, 'data.csv'), path.join(cwd, 'link-extra'));
  await link(path.join(home, '.ssh', 'id_ed25519'), path.join(cwd, 'innocent.txt'));
  // For the existence-oracle cases: links (target, link) to what is and to what is not there.
  const oracleLinks: [string, string][] = [
    [path.join(home, 'missing.txt'), path.join(cwd, 'dangling-out')],
    [path.join(cwd, 'dangling-out'), path.join(cwd, 'chain-dangling')],
    [path.join(home, '.ssh', 'id_missing'), path.join(cwd, 'dangling-key')],
    [path.join(cwd, '.env'), path.join(cwd, 'alias-env')],
    [path.join(cwd, '.env.gone'), path.join(cwd, 'alias-env-gone')],
    [path.join(home, '.ssh'), path.join(home, 'outside-link-to-ssh')],
    [path.join(home, 'outside-loop'), path.join(home, 'outside-loop')],
    [path.join(cwd, 'inside-loop'), path.join(cwd, 'inside-loop')],
  ];
  for (const [target, at] of oracleLinks) await symlink(target, at);
  execFileSync('mkfifo', [path.join(cwd, 'pipe')]);
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(path.join(cwd, 'sock'), resolve));
  conf = await PathConfinement.create({ cwd, roots: [extra], home, configDirs: [path.join(cwd, 'cfg')] });
});

afterAll(async () => {
  await new Promise<void>((resolve) => socketServer.close(() => resolve()));
  await rm(base, { recursive: true, force: true });
});

async function refusal(p: string, c: PathConfinement = conf): Promise<PathRefusedError> {
  try {
    const opened = await c.open(p);
    await opened.handle.close();
  } catch (err) {
    expect(err).toBeInstanceOf(PathRefusedError);
    return err as PathRefusedError;
  }
  throw new Error(`expected ${p} to be refused`);
}

describe('escape attempts are refused', () => {
  const cases: [string, () => string, PathRefusedError['reason']][] = [
    ['.. walk to a denied file', () => '../.ssh/id_ed25519', 'denied'],
    ['.. walk to a plain file outside', () => '../outside.txt', 'outside_roots'],
    ['.. walk through a subfolder', () => 'sub/../../outside.txt', 'outside_roots'],
    [
      'sibling root sharing the prefix (absolute)',
      () => path.join(home, 'project-evil', 'secret.txt'),
      'outside_roots',
    ],
    ['sibling root sharing the prefix (relative)', () => '../project-evil/secret.txt', 'outside_roots'],
    ['symlink to a file outside', () => 'link-out', 'outside_roots'],
    ['symlink chain to a file outside', () => 'chain', 'outside_roots'],
    // Where a path leads is denied: said as such (not "outside the roots", which would invite the
    // user to add a root for a credentials file).
    ['symlink to a denied file outside the roots', () => 'link-key', 'denied'],
    ['symlink to a missing file in a denied folder outside the roots', () => 'dangling-key', 'denied'],
    ['symlinked parent folder', () => 'linkdir/file.txt', 'outside_roots'],
    ['.env', () => '.env', 'denied'],
    ['.env.local', () => '.env.local', 'denied'],
    ['credentials.json at depth', () => 'deep/a/b/credentials.json', 'denied'],
    ['CREDENTIALS.JSON in capitals', () => 'deep/CREDENTIALS.JSON', 'denied'],
    ['~/.ssh/id_ed25519 by absolute path', () => path.join(home, '.ssh', 'id_ed25519'), 'denied'],
    ['a .ssh folder inside an allowed root', () => '.ssh/key', 'denied'],
    ["Cairn's own config dir ($CAIRN_CONFIG_DIR)", () => 'cfg/config.json', 'denied'],
    ['/etc/passwd', () => '/etc/passwd', 'denied'],
    ['a FIFO', () => 'pipe', 'not_regular'],
    ['a socket', () => 'sock', 'not_regular'],
    ['/dev/zero', () => '/dev/zero', 'outside_roots'],
    ['a directory', () => 'sub', 'not_regular'],
    ['a hard link to a denied file', () => 'innocent.txt', 'hard_link'],
    ['a missing file', () => 'nope.txt', 'not_found'],
    ['a NUL byte', () => 'report.md\0.txt', 'invalid'],
  ];
  for (const [name, p, reason] of cases) {
    it(name, async () => {
      expect((await refusal(p())).reason).toBe(reason);
    });
  }

  it('the deny-list wins over an explicit root', async () => {
    const wide = await PathConfinement.create({ cwd, roots: [home], home });
    expect((await refusal(path.join(home, '.aws', 'credentials'), wide)).reason).toBe('denied');
    expect((await refusal(path.join(home, '.config', 'cairn', 'config.json'), wide)).reason).toBe('denied');
    expect((await refusal(path.join(home, '.config', 'gcloud', 'creds.db'), wide)).reason).toBe('denied');
    // ...while a plain file under that root is fine.
    const ok = await wide.open(path.join(home, 'outside.txt'));
    await ok.handle.close();
  });

  it('a device is refused even inside an allowed root', async () => {
    const dev = await PathConfinement.create({ cwd, roots: ['/dev'], home });
    expect((await refusal('/dev/zero', dev)).reason).toBe('not_regular');
    expect((await refusal('/dev/null', dev)).reason).toBe('not_regular');
  });

  it('a file swapped for a symlink to a denied file between check and open', async () => {
    const target = await put(path.join(cwd, 'swap1.txt'), 'harmless');
    const err = await conf
      .open('swap1.txt', {
        beforeOpen: async () => {
          await unlink(target);
          await symlink(path.join(home, '.ssh', 'id_ed25519'), target);
        },
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(PathRefusedError);
    expect((err as PathRefusedError).reason).toBe('changed');
  });

  it('a file swapped for another file between check and open', async () => {
    const target = await put(path.join(cwd, 'swap2.txt'), 'harmless');
    const other = await put(path.join(cwd, 'swap2-other.txt'), 'other');
    const err = await conf.open('swap2.txt', { beforeOpen: () => rename(other, target) }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as PathRefusedError).reason).toBe('changed');
  });
});

describe('no existence oracle: a refusal reads the same whether or not the path exists', () => {
  /** A refusal with the requested path taken out of its message. */
  const shape = async (p: string) => {
    const err = await refusal(p);
    // The message starts with the path as requested (only that first mention is the path).
    return { reason: err.reason, message: err.message.replace(p, '<path>') };
  };
  const pairs: [string, () => string, () => string][] = [
    ['a file outside the roots', () => path.join(home, 'outside.txt'), () => path.join(home, 'missing.txt')],
    ['the same, relative', () => '../outside.txt', () => '../missing.txt'],
    [
      'a file in a folder outside',
      () => path.join(home, 'outside-dir', 'file.txt'),
      () => path.join(home, 'outside-dir', 'missing.txt'),
    ],
    [
      'a file in a missing folder outside',
      () => path.join(home, 'outside-dir', 'file.txt'),
      () => path.join(home, 'no-dir', 'file.txt'),
    ],
    ['a folder outside', () => path.join(home, 'outside-dir'), () => path.join(home, 'no-dir')],
    ['a symlink in the root to outside, or dangling there', () => 'link-out', () => 'dangling-out'],
    ['a chain of symlinks to outside, or dangling there', () => 'chain', () => 'chain-dangling'],
    ['through a symlinked folder outside', () => 'linkdir/file.txt', () => 'linkdir/missing.txt'],
    ['a symlink loop outside', () => path.join(home, 'outside-loop'), () => path.join(home, 'missing.txt')],
    ['a device outside', () => '/dev/zero', () => '/dev/no-such-device'],
    [
      'a denied file outside, by name',
      () => path.join(home, '.ssh', 'id_ed25519'),
      () => path.join(home, '.ssh', 'id_missing'),
    ],
    ['a symlink in the root to a denied file outside, or to a missing one', () => 'link-key', () => 'dangling-key'],
    [
      'a symlink outside the roots into a denied folder: to a file there, or to a missing one',
      () => path.join(home, 'outside-link-to-ssh', 'config'),
      () => path.join(home, 'outside-link-to-ssh', 'missing-config'),
    ],
    ['a denied name inside the root', () => '.env', () => '.env.gone'],
    ['a symlink in the root to a denied name, or to a missing one', () => 'alias-env', () => 'alias-env-gone'],
  ];
  for (const [name, there, notThere] of pairs) {
    it(name, async () => {
      expect(await shape(notThere())).toEqual(await shape(there()));
    });
  }

  it('outside the roots, every refusal is the one answer, exists or not', async () => {
    for (const p of [path.join(home, 'outside.txt'), path.join(home, 'missing.txt'), 'dangling-out', 'linkdir/x']) {
      expect((await refusal(p)).reason, p).toBe('outside_roots');
    }
  });

  it('a path that leads to a denied place is denied, inside the roots or out, exists or not', async () => {
    for (const p of ['link-key', 'dangling-key', path.join(home, 'outside-link-to-ssh', 'config'), 'alias-env-gone']) {
      const err = await refusal(p);
      expect(err.reason, p).toBe('denied');
      expect(err.message, p).not.toMatch(/allow-path/);
    }
  });

  it('a missing file inside the roots is not_found, a symlink loop inside too', async () => {
    expect((await refusal('nope.txt')).reason).toBe('not_found');
    expect((await refusal('sub/nope/deeper.txt')).reason).toBe('not_found');
    expect((await refusal('inside-loop')).reason).toBe('not_found');
  });
});

describe('allowed files open', () => {
  const allowed: [string, () => string, string][] = [
    ['a file in the cwd', () => 'report.md', '# report'],
    ['a file in a subfolder', () => 'sub/notes.txt', 'notes'],
    ['an absolute path in the cwd', () => path.join(cwd, 'report.md'), '# report'],
    ['a file in an extra root', () => path.join(extra, 'data.csv'), 'a,b'],
    ['a symlink in the cwd to a file in an extra root', () => 'link-extra', 'a,b'],
    ['a name that merely contains env', () => 'environment.txt', 'fine'],
    ['a name ending in .env', () => 'my.env', 'fine too'],
    ['a harmless .. walk', () => 'sub/../report.md', '# report'],
  ];
  for (const [name, p, text] of allowed) {
    it(name, async () => {
      const opened = await conf.open(p());
      try {
        expect(opened.size).toBe(Buffer.byteLength(text));
        expect(await opened.handle.readFile('utf8')).toBe(text);
      } finally {
        await opened.handle.close();
      }
    });
  }
});

describe('roots', () => {
  it('isInside compares by path, not by string prefix', () => {
    expect(isInside('/allowed', '/allowed/a')).toBe(true);
    expect(isInside('/allowed', '/allowed')).toBe(true);
    expect(isInside('/allowed', '/allowed-evil/a')).toBe(false);
    expect(isInside('/allowed', '/')).toBe(false);
    expect(isInside('/allowed', '/allowed/..foo')).toBe(true);
  });

  it('parses repeatable, colon-separated flags and the env variable', () => {
    expect(parseAllowPaths(['/a:/b', '/c'], '/d::/e')).toEqual(['/a', '/b', '/c', '/d', '/e']);
    expect(parseAllowPaths([], undefined)).toEqual([]);
  });

  it('a working directory at the filesystem root is not an allowed root', async () => {
    const slash = await PathConfinement.create({ cwd: '/', roots: [extra], home });
    expect(slash.roots).toEqual([extra]);
    expect((await refusal(path.join(home, 'outside.txt'), slash)).reason).toBe('outside_roots');
    const ok = await slash.open(path.relative('/', path.join(extra, 'data.csv')));
    await ok.handle.close();
  });

  it('a relative root is an error', () => {
    expect(() => parseAllowPaths(['/a:rel'], undefined)).toThrow(RelativeRootError);
    expect(() => parseAllowPaths([], './x')).toThrow(RelativeRootError);
  });
});

describe('backups and editor copies', () => {
  it('a name counts with every name it may be a copy of', () => {
    expect(originalNames('.npmrc.bak~')).toEqual(['.npmrc.bak~', '.npmrc.bak', '.npmrc']);
    expect(originalNames('..netrc.swp')).toEqual(['..netrc.swp', '.netrc']);
    expect(originalNames('#.netrc#')).toEqual(['#.netrc#', '.netrc']);
    expect(originalNames('.#id_rsa')).toEqual(['.#id_rsa', 'id_rsa']);
    expect(originalNames('history.~2~')).toEqual(['history.~2~', 'history']);
    expect(originalNames('.bash_history.1')).toEqual(['.bash_history.1', '.bash_history']);
    expect(originalNames('report.md')).toEqual(['report.md']);
  });

  it('a copy of a denied file is denied, saying of what; a copy of anything else is not', () => {
    expect(deniedByName('/h/.git-credentials.bak')).toBe(
      'it is a copy of .git-credentials, and files named .git-credentials are never read',
    );
    expect(deniedByName('/h/.aws.old/credentials')).toBe('paths through .aws are never read');
    expect(deniedByName('/h/.claude/settings.json.cairn-backup')).toBe('.claude/settings*.json files are never read');
    expect(deniedByName('/h/report.md.bak')).toBeNull();
    expect(deniedByName('/h/.claude/projects/p/s.jsonl')).toBeNull();
  });
});
