import { createReadStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

/**
 * Gemini CLI's chat logs: `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`, where
 * `~/.gemini/projects.json` maps each folder to its `<project>` name. The first line is the
 * header (`sessionId`, `kind`: "main" for the main loop); then one line per message (`type`
 * "user" or "gemini", a "gemini" one with the `model` that answered) and `$set` lines that
 * update the header or rewrite `messages` whole (on a resume). Sub-agents keep logs of their own.
 */

export const geminiDir = () => path.join(homedir(), '.gemini');

export interface GeminiChat {
  sessionId: string | null;
  /** The last answer's model. */
  model: string | null;
  /** Every model that answered, sorted. */
  modelsUsed: string[];
}

type Message = { type?: unknown; model?: unknown };

export async function scanGeminiChat(file: string): Promise<GeminiChat> {
  const found: GeminiChat = { sessionId: null, model: null, modelsUsed: [] };
  const used = new Set<string>();
  const answer = (m: Message) => {
    if (m?.type !== 'gemini' || typeof m.model !== 'string' || m.model === '') return;
    found.model = m.model;
    used.add(m.model);
  };
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const text of lines) {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof line !== 'object' || line === null) continue;
    if (found.sessionId === null && typeof line.sessionId === 'string') found.sessionId = line.sessionId;
    const set = line.$set as { messages?: unknown } | undefined;
    if (Array.isArray(set?.messages)) for (const m of set.messages) answer(m as Message);
    else answer(line as Message);
  }
  found.modelsUsed = [...used].sort();
  return found;
}

/** The newest chat log of the folder `cwd`, or null when Gemini CLI has none for it. */
export async function newestChatOf(cwd: string, dir = geminiDir()): Promise<string | null> {
  let projects: Record<string, unknown> = {};
  try {
    projects =
      (JSON.parse(await readFile(path.join(dir, 'projects.json'), 'utf8')) as { projects?: typeof projects })
        .projects ?? {};
  } catch {
    return null;
  }
  const name = projects[cwd];
  if (typeof name !== 'string' || !/^[^/\\]+$/.test(name) || name === '..') return null;
  const chats = path.join(dir, 'tmp', name, 'chats');
  const names = (await readdir(chats).catch(() => [] as string[])).filter((n) => /^session-.*\.jsonl$/.test(n));
  let best: { file: string; mtime: number } | null = null;
  for (const n of names) {
    const file = path.join(chats, n);
    const mtime = (await stat(file)).mtimeMs;
    if (!best || mtime > best.mtime) best = { file, mtime };
  }
  return best?.file ?? null;
}
