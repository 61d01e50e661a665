import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { UsageError } from '../usage-error.js';

/** One file `cairn push` uploads: where its bytes are, the name it is stored under, its size. */
export interface PushInput {
  file: string;
  filename: string;
  size: number;
  /** For a file found under a folder given with --recursive: its path from that folder's parent. */
  relativePath?: string;
  /** Stdin saved to a temporary file: a path no later push will name, so nothing to resume by. */
  temporary?: true;
}

export interface ExpandOptions {
  recursive: boolean;
  /** --name: the stored filename of the one input (required for `-`). */
  name?: string;
  stdin?: NodeJS.ReadableStream;
}

/**
 * The push's arguments as files, all checked before any upload starts: a folder needs
 * --recursive (its regular files, in name order, symlinked folders not followed), `-` is stdin
 * (saved to a temporary file first, so it is hashed for the idempotency key and retried like a
 * file) and needs --name. `cleanup` removes that temporary file.
 */
export async function expandInputs(
  args: string[],
  opts: ExpandOptions,
): Promise<{ inputs: PushInput[]; cleanup: () => Promise<void> }> {
  const stdinCount = args.filter((a) => a === '-').length;
  if (stdinCount > 1) throw new UsageError('`-` (stdin) can be given once.');
  if (stdinCount === 1 && opts.name === undefined) {
    throw new UsageError('pushing stdin (`-`) needs --name: the filename to store it under.');
  }
  if (opts.name !== undefined && args.length !== 1) {
    throw new UsageError('--name names one upload; give one file (or `-`).');
  }
  const inputs: PushInput[] = [];
  let tempDir: string | null = null;
  const cleanup = async () => {
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
  };
  try {
    for (const arg of args) {
      if (arg === '-') {
        tempDir = await mkdtemp(path.join(tmpdir(), 'cairn-stdin-'));
        const file = path.join(tempDir, 'stdin');
        await pipeline(opts.stdin ?? process.stdin, createWriteStream(file, { mode: 0o600 }));
        inputs.push({ file, filename: opts.name ?? 'stdin', size: (await stat(file)).size, temporary: true });
        continue;
      }
      const s = await statInput(arg);
      if (s.isDirectory()) {
        if (!opts.recursive) throw new UsageError(`${arg} is a folder; add --recursive to push the files under it.`);
        const found = await filesUnder(arg, path.dirname(path.resolve(arg)));
        if (found.length === 0) throw new UsageError(`no files under ${arg}.`);
        inputs.push(...found);
      } else if (s.isFile()) {
        inputs.push({ file: arg, filename: opts.name ?? path.basename(arg), size: s.size });
      } else {
        throw new UsageError(`${arg} is not a regular file.`);
      }
    }
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { inputs, cleanup };
}

async function statInput(arg: string) {
  try {
    return await stat(arg);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `no such file: ${arg}` : `cannot read ${arg}: ${code ?? err}`);
  }
}

async function filesUnder(dir: string, base: string): Promise<PushInput[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const out: PushInput[] = [];
  for (const e of entries) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) {
      out.push(...(await filesUnder(full, base)));
    } else if (e.isFile() || e.isSymbolicLink()) {
      // A symlink counts when it leads to a regular file; a linked folder is not followed (no loops).
      const s = await stat(full).catch(() => null);
      if (!s?.isFile()) continue;
      const relativePath = path.relative(base, path.resolve(full)).split(path.sep).join('/');
      out.push({ file: full, filename: e.name, size: s.size, relativePath });
    }
  }
  return out;
}
