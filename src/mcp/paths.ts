import { constants, realpathSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { deniedByName, HOME_DENIED } from './deny-list.js';

/**
 * Path confinement for local `path` uploads of the stdio MCP server (spec, MCP rule 2).
 *
 * A path is readable only when, after every symlink is resolved, it lies inside an allowed root
 * (the working directory plus absolute `--allow-path` / CAIRN_MCP_ALLOW_PATH roots) and nothing
 * on the deny-list (src/mcp/deny-list.ts) matches it; the deny-list always wins, and its refusal
 * says so wherever the path leads. The file is then opened without
 * following a final symlink and its identity (dev + ino) must be the one that was checked, so a
 * swap between check and open reads nothing.
 *
 * Hard links: a hard link in an allowed folder to a denied file (say ~/.ssh/id_ed25519) has an
 * innocent name, and its other names cannot be found without walking the disk. So any regular
 * file with more than one link is refused; copying the file (a new inode) is the way around it.
 */

export interface ConfinementOptions {
  /** The server's working directory (always an allowed root). */
  cwd: string;
  /** Extra absolute roots (from --allow-path and CAIRN_MCP_ALLOW_PATH). */
  roots: string[];
  /** The user's home directory, the base of the home deny-list entries. */
  home: string;
  /** Cairn's own config dir(s) besides ~/.config/cairn ($CAIRN_CONFIG_DIR, $XDG_CONFIG_HOME/cairn). */
  configDirs?: string[];
}

export interface OpenedFile {
  handle: FileHandle;
  size: number;
  /** The resolved path that was checked and opened. */
  realPath: string;
}

export interface OpenHooks {
  /** Test seam: runs after the checks and before the open (where a swap would happen). */
  beforeOpen?: (realPath: string) => Promise<void> | void;
}

/** A refused or unreadable path; the message says why in words an agent can act on. */
export class PathRefusedError extends Error {
  constructor(
    message: string,
    readonly reason: 'outside_roots' | 'denied' | 'not_regular' | 'hard_link' | 'changed' | 'not_found' | 'invalid',
  ) {
    super(message);
    this.name = 'PathRefusedError';
  }
}

const SYSTEM_DENIED = ['/etc', '/private/etc', '/Library/Keychains'];

/** True when `child` is `parent` or below it (by path.relative, so /a-evil is not inside /a). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  if (rel === '') return true;
  return rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel);
}

/**
 * Allowed roots from repeatable `--allow-path` values and the env variable, each ':'-separated.
 * Throws RelativeRootError for a relative root (the CLI exits with code 2).
 */
export function parseAllowPaths(flagValues: readonly string[], envValue: string | undefined): string[] {
  const parts = [...flagValues, envValue ?? ''].flatMap((v) => v.split(':')).filter((p) => p !== '');
  for (const p of parts) {
    if (!path.isAbsolute(p)) throw new RelativeRootError(p);
  }
  return parts.map((p) => path.resolve(p));
}

export class RelativeRootError extends Error {
  constructor(readonly root: string) {
    super(`--allow-path / CAIRN_MCP_ALLOW_PATH roots must be absolute paths; got "${root}".`);
    this.name = 'RelativeRootError';
  }
}

/** The real path of `p`, or `p` resolved when it does not exist (yet). */
async function realOrResolved(p: string): Promise<string> {
  const resolved = path.resolve(p);
  try {
    return await realpath(resolved);
  } catch {
    return resolved;
  }
}

/**
 * The same at once, for the working directory and the roots: a few system calls, made on the spot
 * rather than through libuv's thread pool, where waiting for them cost `cairn mcp` 10 to 30 ms
 * before it answered `initialize`.
 */
function realOrResolvedNow(p: string): string {
  const resolved = path.resolve(p);
  try {
    return realpathSync(resolved);
  } catch {
    return resolved;
  }
}

/** Symlinks followed while placing a missing path, as the kernel's own limit (ELOOP after 40). */
const MAX_SYMLINK_HOPS = 40;

/**
 * Where `p` (absolute) leads, every symlink that exists on the way resolved, and whether it
 * exists: realpath() when it does; else the real path of its deepest existing folder plus the
 * rest, following a dangling symlink to where it points. So a missing path is judged by where it
 * would be, exactly like an existing one, and the answer cannot tell the two apart.
 */
async function whereItLeads(p: string, hops = 0): Promise<{ real: string; exists: boolean }> {
  try {
    return { real: await realpath(p), exists: true };
  } catch {
    // Missing, dangling, a loop, or unreadable on the way: placed below.
  }
  const parent = path.dirname(p);
  if (parent === p) return { real: p, exists: false };
  const above = await whereItLeads(parent, hops);
  const here = path.join(above.real, path.basename(p));
  if (!above.exists || hops >= MAX_SYMLINK_HOPS) return { real: here, exists: false };
  let target: string;
  try {
    target = await readlink(here);
  } catch {
    // Not there, not a symlink, or not readable: it stays where it was asked for.
    return { real: here, exists: false };
  }
  const next = await whereItLeads(path.resolve(above.real, target), hops + 1);
  return { real: next.real, exists: false };
}

export class PathConfinement {
  private constructor(
    /** The real working directory: the base of relative paths. */
    readonly cwd: string,
    /** Real paths of the allowed roots. */
    readonly roots: string[],
    /** Denied folders as written (under the home folder, Cairn's config, the system's). */
    private readonly deniedWritten: string[],
  ) {}

  /**
   * Denied folders, both as written and resolved (a symlinked home must not dodge them), resolved
   * at the first check: the deny-list's hundred-odd realpath calls, most of them failing, cost a
   * server start about 30 ms (and a garbage collection) that every conversation would wait for,
   * uploads by path or not.
   */
  private deniedResolved: Promise<string[]> | undefined;
  private deniedDirs(): Promise<string[]> {
    this.deniedResolved ??= Promise.all(this.deniedWritten.map(realOrResolved)).then((resolved) => [
      ...new Set([...this.deniedWritten, ...resolved]),
    ]);
    return this.deniedResolved;
  }

  static async create(opts: ConfinementOptions): Promise<PathConfinement> {
    const cwd = realOrResolvedNow(opts.cwd);
    // Some hosts start servers in `/`: a working directory that is a filesystem root would allow
    // the whole disk, so it is not a root then (relative paths still resolve against it).
    const cwdRoot = path.parse(cwd).root === cwd ? [] : [cwd];
    const roots = [...cwdRoot, ...opts.roots.map(realOrResolvedNow)];
    const written = [
      ...HOME_DENIED.map((d) => path.join(opts.home, d)),
      ...(opts.configDirs ?? []).filter((d) => d !== '').map((d) => path.resolve(d)),
      ...SYSTEM_DENIED,
    ];
    return new PathConfinement(cwd, [...new Set(roots)], written);
  }

  /** Why `p` (an absolute path) is denied, or null (src/mcp/deny-list.ts). */
  private async denial(p: string): Promise<string | null> {
    const byName = deniedByName(p);
    if (byName) return byName;
    for (const d of await this.deniedDirs()) if (isInside(d, p)) return `${d} is on the deny-list`;
    return null;
  }

  /**
   * Checks `requested` (relative paths resolve against the working directory)
   * and returns its real path and lstat, or throws PathRefusedError.
   */
  async check(requested: string): Promise<{ realPath: string; stat: Stats }> {
    if (typeof requested !== 'string' || requested === '' || requested.includes('\0')) {
      throw new PathRefusedError('path must be a non-empty string.', 'invalid');
    }
    const lexical = path.resolve(this.cwd, requested);
    // The deny-list on the path as written: a verdict on the words alone, whatever is on disk.
    const lexicalDenial = await this.denial(lexical);
    if (lexicalDenial) throw new PathRefusedError(`refused ${requested}: ${lexicalDenial}.`, 'denied');
    const { real, exists } = await whereItLeads(lexical);
    // Where it leads, denied: said as such, inside the roots or out, and never as "outside the
    // roots", which would invite the user to widen them for a credentials file. The verdict is on
    // the resolved path's words, before not_found, so a denied file's existence does not show.
    const denial = await this.denial(real);
    if (denial) throw new PathRefusedError(`refused ${requested}: it leads to a denied place: ${denial}.`, 'denied');
    // Outside the roots: one answer, whether the path exists, dangles or loops, so no refusal tells
    // what lies outside. Only inside the roots do the later answers differ.
    if (!this.roots.some((r) => isInside(r, real))) {
      throw new PathRefusedError(
        `refused ${requested}: it is outside the allowed roots (${this.roots.join(', ')}); ` +
          'the user can add a root with --allow-path when starting the server.',
        'outside_roots',
      );
    }
    const stat = exists ? await lstat(real).catch(() => null) : null;
    // Inside the roots, so naming where it looked tells nothing the user did not allow.
    if (!stat) throw new PathRefusedError(`no readable file at ${requested} (looked at ${real}).`, 'not_found');
    assertPlainFile(stat, requested);
    return { realPath: real, stat };
  }

  /** check() then open read-only without following a final symlink; the caller closes the handle. */
  async open(requested: string, hooks: OpenHooks = {}): Promise<OpenedFile> {
    const { realPath, stat } = await this.check(requested);
    await hooks.beforeOpen?.(realPath);
    let handle: FileHandle;
    try {
      handle = await open(realPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new PathRefusedError(
        `refused ${requested}: it changed while being opened (${code ?? 'error'}).`,
        code === 'ENOENT' ? 'not_found' : 'changed',
      );
    }
    try {
      const fstat = await handle.stat();
      assertPlainFile(fstat, requested);
      if (fstat.dev !== stat.dev || fstat.ino !== stat.ino) {
        throw new PathRefusedError(`refused ${requested}: it was replaced while being opened.`, 'changed');
      }
      return { handle, size: fstat.size, realPath };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }
}

function assertPlainFile(stat: Stats, requested: string): void {
  if (!stat.isFile()) {
    const kind = stat.isDirectory()
      ? 'a directory'
      : stat.isFIFO()
        ? 'a FIFO'
        : stat.isSocket()
          ? 'a socket'
          : stat.isCharacterDevice() || stat.isBlockDevice()
            ? 'a device'
            : stat.isSymbolicLink()
              ? 'a symlink'
              : 'not a regular file';
    throw new PathRefusedError(`refused ${requested}: it is ${kind}; only regular files can be stored.`, 'not_regular');
  }
  if (stat.nlink > 1) {
    throw new PathRefusedError(
      `refused ${requested}: it has ${stat.nlink} hard links, and another name could be a denied file; ` +
        'copy it to a new file first.',
      'hard_link',
    );
  }
}
