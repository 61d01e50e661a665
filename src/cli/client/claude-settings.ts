import { copyFile, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { UsageError } from '../usage-error.js';
import { nonEmpty } from './config-file.js';

/**
 * Cairn's SessionEnd hook in Claude Code's settings file. The file is the user's: it is merged,
 * never rewritten from scratch (every other key stays, in its order), a copy of it is kept
 * before each change, adding twice changes nothing, and removing takes out exactly what adding
 * put in. What adding created (the `hooks` object, the `SessionEnd` list) is remembered in a small
 * state file next to Cairn's config (as is a settings file Cairn had to create), so that removing
 * drops those only when Cairn made them.
 */

/** Every command Cairn installs contains this; it is how our entry is found again. */
export const HOOK_MARKER = 'capture claude-code --from-hook end';

/**
 * The hook's own time budget, in seconds. Claude Code (2.1) cancels SessionEnd hooks after 1.5 s
 * unless a hook asks for more (up to 60 s are honoured): a push of a long transcript from a slow
 * link takes longer than that, and a cancelled hook stores nothing.
 */
export const HOOK_TIMEOUT_SECONDS = 30;

/** The hook group Cairn adds to `hooks.SessionEnd`. */
export const hookGroup = (command: string) => ({
  hooks: [{ type: 'command', command, timeout: HOOK_TIMEOUT_SECONDS }],
});

/** Which host's hook: how Cairn's entry is recognised, and the group that installing adds. */
export interface HookFlavor {
  /** Every command of this flavour contains it. */
  marker: string;
  group(command: string): Json;
}

export const CLAUDE_CODE_HOOK: HookFlavor = { marker: HOOK_MARKER, group: hookGroup };

/** $CLAUDE_CONFIG_DIR, else ~/.claude. */
export function claudeDir(env: NodeJS.ProcessEnv = process.env): string {
  return nonEmpty(env.CLAUDE_CONFIG_DIR) ?? path.join(homedir(), '.claude');
}

export function defaultSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(claudeDir(env), 'settings.json');
}

export const backupPath = (settings: string) => `${settings}.cairn-backup`;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

interface HookState {
  /** Per settings file (absolute path): what Cairn created there. */
  files: Record<string, { createdFile: boolean; createdHooks: boolean; createdSessionEnd: boolean }>;
}

async function readSettings(file: string): Promise<{ settings: Json; existed: boolean; mode: number }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { settings: {}, existed: false, mode: 0o600 };
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON; fix it first (nothing was changed).`);
  }
  if (!isObject(parsed)) throw new UsageError(`${file} does not hold a JSON object; nothing was changed.`);
  return { settings: parsed, existed: true, mode: (await stat(file)).mode & 0o777 };
}

/** Writes through a temporary file and a rename, so a crash never leaves half a settings file. */
async function writeJson(file: string, value: unknown, mode: number): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode });
  await rename(tmp, file);
}

async function readState(file: string): Promise<HookState> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as unknown;
    if (isObject(parsed) && isObject(parsed.files)) return parsed as unknown as HookState;
  } catch {
    // Missing or unreadable: nothing recorded.
  }
  return { files: {} };
}

function sessionEndList(settings: Json, file: string): unknown[] | undefined {
  const hooks = settings.hooks;
  if (hooks === undefined) return undefined;
  if (!isObject(hooks)) throw new UsageError(`"hooks" in ${file} is not an object; nothing was changed.`);
  const list = hooks.SessionEnd;
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) throw new UsageError(`"hooks.SessionEnd" in ${file} is not a list; nothing was changed.`);
  return list;
}

/** Whether a hook group is one Cairn added: a group of exactly one command hook of ours. */
function isOurGroup(group: unknown, marker: string): boolean {
  if (!isObject(group) || !Array.isArray(group.hooks) || group.hooks.length !== 1) return false;
  const hook = group.hooks[0];
  return isObject(hook) && hook.type === 'command' && typeof hook.command === 'string' && hook.command.includes(marker);
}

export type InstallOutcome = { changed: false } | { changed: true; backup: string | null };

export async function installHook(
  file: string,
  command: string,
  stateFile: string,
  flavor: HookFlavor = CLAUDE_CODE_HOOK,
): Promise<InstallOutcome> {
  const { settings, existed, mode } = await readSettings(file);
  const list = sessionEndList(settings, file);
  const group = flavor.group(command);
  const ours = list?.findIndex((g) => isOurGroup(g, flavor.marker)) ?? -1;
  if (ours >= 0 && JSON.stringify(list?.[ours]) === JSON.stringify(group)) return { changed: false };
  const createdHooks = settings.hooks === undefined;
  const createdSessionEnd = list === undefined;
  const hooks = (settings.hooks ?? {}) as Json;
  // An entry of an older install (without the time budget, another path) is replaced where it stands.
  hooks.SessionEnd = ours >= 0 ? list?.map((g, i) => (i === ours ? group : g)) : [...(list ?? []), group];
  settings.hooks = hooks;

  let backup: string | null = null;
  if (existed) {
    backup = backupPath(file);
    await copyFile(file, backup);
  }
  const state = await readState(stateFile);
  // Replacing our own entry keeps what the first install recorded it had created.
  if (ours < 0) state.files[path.resolve(file)] = { createdFile: !existed, createdHooks, createdSessionEnd };
  await writeJson(stateFile, state, 0o600);
  await writeJson(file, settings, mode);
  return { changed: true, backup };
}

export async function uninstallHook(
  file: string,
  stateFile: string,
  flavor: HookFlavor = CLAUDE_CODE_HOOK,
): Promise<InstallOutcome> {
  const { settings, existed, mode } = await readSettings(file);
  const list = existed ? sessionEndList(settings, file) : undefined;
  const isOurs = (g: unknown) => isOurGroup(g, flavor.marker);
  if (!list?.some(isOurs)) return { changed: false };
  const state = await readState(stateFile);
  const created = state.files[path.resolve(file)] ?? {
    createdFile: false,
    createdHooks: false,
    createdSessionEnd: false,
  };
  const hooks = settings.hooks as Json;
  const rest = list.filter((g) => !isOurs(g));
  if (rest.length === 0 && created.createdSessionEnd) delete hooks.SessionEnd;
  else hooks.SessionEnd = rest;
  if (Object.keys(hooks).length === 0 && created.createdHooks) delete settings.hooks;

  let backup: string | null = backupPath(file);
  await copyFile(file, backup);
  if (created.createdFile && Object.keys(settings).length === 0) {
    // Cairn made this file for its hook alone: it goes, and so does the copy of it.
    await unlink(file);
    await unlink(backup);
    backup = null;
  } else await writeJson(file, settings, mode);
  delete state.files[path.resolve(file)];
  if (Object.keys(state.files).length === 0) await unlink(stateFile).catch(() => undefined);
  else await writeJson(stateFile, state, 0o600);
  return { changed: true, backup };
}
