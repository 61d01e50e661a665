import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../usage-error.js';

/**
 * The CLI's config file: named profiles, each an API key and URL, written by `cairn login`.
 * It holds secrets, so it is written with mode 0600 inside a 0700 folder.
 */

export interface Profile {
  api_key?: string;
  api_url?: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = 'default';

/** $CAIRN_CONFIG_DIR/config.json, else $XDG_CONFIG_HOME/cairn/config.json, else ~/.config/cairn/config.json. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const dir = nonEmpty(env.CAIRN_CONFIG_DIR);
  if (dir) return path.join(dir, 'config.json');
  const xdg = nonEmpty(env.XDG_CONFIG_HOME);
  return path.join(xdg ?? path.join(homedir(), '.config'), 'cairn', 'config.json');
}

/** The parsed file, or an empty config when it does not exist yet. */
export async function readConfigFile(file: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(
      `config file ${file} is not valid JSON; fix it or run \`cairn login\` again after removing it.`,
    );
  }
  return normalise(parsed);
}

/** Replaces the file atomically with mode 0600 (and its folder 0700 when created). */
export async function writeConfigFile(file: string, config: ConfigFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  // The umask cannot widen 0600, but an explicit chmod also covers filesystems that ignore `mode`.
  await chmod(tmp, 0o600);
  await rename(tmp, file);
}

/** Sets one profile's key and URL, keeping every other profile as it was. */
export async function saveProfile(file: string, name: string, profile: Profile): Promise<void> {
  const config = await readConfigFile(file);
  config.profiles[name] = { ...config.profiles[name], ...profile };
  await writeConfigFile(file, config);
}

function normalise(raw: unknown): ConfigFile {
  const profiles: Record<string, Profile> = {};
  const source = isObject(raw) && isObject(raw.profiles) ? raw.profiles : {};
  for (const [name, value] of Object.entries(source)) {
    if (!isObject(value)) continue;
    const p: Profile = {};
    if (typeof value.api_key === 'string') p.api_key = value.api_key;
    if (typeof value.api_url === 'string') p.api_url = value.api_url;
    profiles[name] = p;
  }
  return { profiles };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An environment value, treating the empty string as unset. */
export function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}
