import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { nonEmpty } from './config-file.js';

/**
 * Codex CLI's session rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl`
 * (CODEX_HOME defaults to ~/.codex), one JSON object a line. The first is `session_meta` (the
 * session id and the folder it ran in); each turn writes a `turn_context` whose `model` is the
 * model that turn ran on. Sub-agents run in threads of their own, with rollouts of their own, so
 * the turn contexts of one rollout are its main loop's.
 */

export function codexHome(env: NodeJS.ProcessEnv = process.env): string {
  return nonEmpty(env.CODEX_HOME) ?? path.join(homedir(), '.codex');
}

export interface Rollout {
  sessionId: string | null;
  cwd: string | null;
  /** The last turn's model. */
  model: string | null;
  /** Every model a turn ran on, sorted. */
  modelsUsed: string[];
}

type Line = { type?: unknown; payload?: { id?: unknown; cwd?: unknown; model?: unknown } };

/** Reads a rollout line by line (memory does not grow with the file); lines that are not JSON are skipped. */
export async function scanRollout(file: string, firstLineOnly = false): Promise<Rollout> {
  const found: Rollout = { sessionId: null, cwd: null, model: null, modelsUsed: [] };
  const used = new Set<string>();
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const text of lines) {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      continue;
    }
    const p = line?.payload;
    if (line?.type === 'session_meta' && p && found.sessionId === null) {
      if (typeof p.id === 'string') found.sessionId = p.id;
      if (typeof p.cwd === 'string') found.cwd = p.cwd;
    } else if (line?.type === 'turn_context' && typeof p?.model === 'string' && p.model !== '') {
      found.model = p.model;
      used.add(p.model);
    }
    if (firstLineOnly) break;
  }
  lines.close();
  found.modelsUsed = [...used].sort();
  return found;
}

/** Every rollout file under the sessions folder, newest first by modification time. */
export async function rolloutFiles(home: string): Promise<string[]> {
  const dir = path.join(home, 'sessions');
  let names: string[];
  try {
    names = (await readdir(dir, { recursive: true })).filter((n) => /(^|\/)rollout-[^/]*\.jsonl$/.test(n));
  } catch {
    return [];
  }
  const withTimes = await Promise.all(
    names.map(async (n) => ({ file: path.join(dir, n), mtime: (await stat(path.join(dir, n))).mtimeMs })),
  );
  return withTimes.sort((a, b) => b.mtime - a.mtime).map((f) => f.file);
}
