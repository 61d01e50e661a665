import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { nodeCrypto } from 'cairn-store-sdk/internal';
import { nonEmpty } from './config-file.js';

/**
 * What `cairn push` remembers of a resumable upload while it is under way: one small JSON file per
 * local file (named after its absolute path, size and modification time), holding the upload URL,
 * so that the same push run again after an interruption goes on from the server's offset. The file
 * is removed once the upload is finished.
 */

export interface SavedUpload {
  upload_url: string;
  /** The API the upload was made on: the URL means nothing to another server. */
  api_url: string;
  /** The push's Idempotency-Key: other options (session, metadata, …) are another upload. */
  idempotency_key: string;
  file: string;
  size: number;
  mtime_ms: number;
  created_at: string;
}

/** The local file an upload is for: the key of its state file. */
export interface FileIdentity {
  /** Absolute. */
  file: string;
  size: number;
  mtimeMs: number;
}

/**
 * $CAIRN_STATE_DIR/uploads; else, when CAIRN_CONFIG_DIR is set, $CAIRN_CONFIG_DIR/uploads (one
 * folder for everything the CLI keeps); else $XDG_STATE_HOME/cairn/uploads, else
 * ~/.local/state/cairn/uploads.
 */
export function uploadStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const stateDir = nonEmpty(env.CAIRN_STATE_DIR);
  if (stateDir) return path.join(stateDir, 'uploads');
  const configDir = nonEmpty(env.CAIRN_CONFIG_DIR);
  if (configDir) return path.join(configDir, 'uploads');
  const xdg = nonEmpty(env.XDG_STATE_HOME) ?? path.join(homedir(), '.local', 'state');
  return path.join(xdg, 'cairn', 'uploads');
}

/** The state file of one version of one local file (another size or mtime is another file). */
export function uploadStateFile(dir: string, id: FileIdentity): string {
  const name = nodeCrypto()
    .createHash('sha256')
    .update(`${id.file}\u0000${id.size}\u0000${id.mtimeMs}`, 'utf8')
    .digest('hex');
  return path.join(dir, `${name}.json`);
}

/** The saved upload, or null when there is none (or the file is unreadable: it is then started afresh). */
export async function readSavedUpload(stateFile: string): Promise<SavedUpload | null> {
  let text: string;
  try {
    text = await readFile(stateFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const v = JSON.parse(text) as Partial<SavedUpload>;
    const ok =
      typeof v.upload_url === 'string' &&
      typeof v.api_url === 'string' &&
      typeof v.idempotency_key === 'string' &&
      typeof v.file === 'string' &&
      typeof v.size === 'number' &&
      typeof v.mtime_ms === 'number';
    return ok ? (v as SavedUpload) : null;
  } catch {
    return null;
  }
}

/** Written atomically, 0600 in a 0700 folder (the URL is no secret without the key, but it is the user's). */
export async function saveUpload(stateFile: string, saved: SavedUpload): Promise<void> {
  await mkdir(path.dirname(stateFile), { recursive: true, mode: 0o700 });
  const tmp = `${stateFile}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, stateFile);
}

export async function forgetUpload(stateFile: string): Promise<void> {
  await rm(stateFile, { force: true });
}

/** The server keeps an unfinished upload 24 hours: a state file older than this names nothing. */
export const STALE_STATE_MS = 25 * 60 * 60 * 1000;

/**
 * Removes state files older than STALE_STATE_MS (of pushes that were never re-run, or of files
 * since changed), so the folder does not grow. Best effort: a file that cannot go stays.
 */
export async function pruneStaleUploads(dir: string, now: number = Date.now()): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = path.join(dir, name);
    const s = await stat(file).catch(() => null);
    if (s && now - s.mtimeMs > STALE_STATE_MS) await rm(file, { force: true }).catch(() => {});
  }
}
