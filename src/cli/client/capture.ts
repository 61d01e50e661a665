import { copyFile, mkdtemp, readdir, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type ArtifactRecord,
  deriveIdempotencyKey,
  scanTranscriptFile,
  sha256File,
  type UploadOptions,
  withTranscriptModels,
} from 'cairn-store-sdk';
import type { Command } from 'commander';
import { fitted, withExamples } from '../help.js';
import { UsageError } from '../usage-error.js';
import { claudeDir, defaultSettingsPath, HOOK_MARKER, installHook, uninstallHook } from './claude-settings.js';
import { configPath, nonEmpty } from './config-file.js';
import { type Ctx, clientAction, withClientOptions } from './context.js';
import { formatBytes } from './format.js';
import { missingKeyMessage } from './settings.js';

/**
 * `cairn capture claude-code`: session transcripts captured where the agent runs. `--install`
 * adds a SessionEnd hook to Claude Code's settings that pushes each ending session's transcript
 * (`capture=end`); `--snapshot` pushes the current session's transcript now (`capture=snapshot`).
 * Transcripts are stored as they are: the service does not redact secrets in them.
 */
export function registerCaptureCommands(program: Command): void {
  const capture = withExamples(
    program
      .command('capture')
      .description('Capture agent session transcripts where the agent runs (see: cairn capture claude-code --help).'),
    ['cairn capture claude-code --install', 'cairn capture claude-code --snapshot'],
  );
  withClientOptions(
    capture
      .command('claude-code')
      .description(
        "Push Claude Code session transcripts: a SessionEnd hook in Claude Code's settings, or a snapshot now.",
      )
      .option('--install', "add a SessionEnd hook to Claude Code's settings (merged; a backup is kept)")
      .option('--uninstall', 'remove exactly what --install added')
      .option('--snapshot', "push the current session's transcript now (metadata capture=snapshot)")
      .option('--from-hook <event>', "the hook's own entry point: reads Claude Code's hook input on stdin")
      .option(
        '--settings <file>',
        'settings file (default: $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json)',
      )
      .option(
        '--session-id <id>',
        "with --snapshot: the Claude Code session to push (default: $CLAUDE_SESSION_ID, or this folder's only one)",
      )
      .option('--transcript-path <file>', 'with --snapshot: the transcript file to push')
      .option('--agent <id>', 'agent label (else CAIRN_AGENT_ID, else claude-code)')
      .addHelpText(
        'after',
        fitted(
          `
The hook runs \`cairn capture claude-code --from-hook end\` when a session ends; it pushes the
session's transcript with --transcript, the session id as --session and metadata capture=end,
plus model, model_source=transcript and models_used read from the transcript. It uses your saved
login (\`cairn login\`, or CAIRN_API_KEY in Claude Code's environment); no key is written to the
settings file. Transcripts are stored as they are: Cairn does not redact secrets in them.`,
        ),
      ),
    [
      'cairn capture claude-code --install',
      'cairn capture claude-code --snapshot',
      'cairn capture claude-code --snapshot --session-id 3f1c9a2e-…',
      'cairn capture claude-code --uninstall',
    ],
  ).action(clientAction(captureClaudeCode, { needsKey: false }));
}

type Mode = 'install' | 'uninstall' | 'snapshot' | 'hook';

function modeOf(opts: Record<string, unknown>): Mode {
  const modes = (['install', 'uninstall', 'snapshot'] as const).filter((m) => opts[m] === true);
  const chosen: Mode[] = [...modes, ...(opts.fromHook !== undefined ? (['hook'] as const) : [])];
  if (chosen.length !== 1) throw new UsageError('pass exactly one of --install, --uninstall or --snapshot.');
  return chosen[0] as Mode;
}

const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The hook's command line: this Node and this `cairn`, by absolute path (hooks run without our PATH). */
async function hookCommand(ctx: Ctx, settingsFlag: string | undefined): Promise<string> {
  const script = await realpath(process.argv[1] ?? 'cairn');
  const parts = [process.execPath, script, ...HOOK_MARKER.split(' ')];
  if (ctx.settings.profileFlag) parts.push('--profile', ctx.settings.profile);
  if (settingsFlag) parts.push('--settings', path.resolve(settingsFlag));
  return parts.map(shellQuote).join(' ');
}

async function captureClaudeCode(ctx: Ctx, _args: unknown[], opts: Record<string, unknown>): Promise<void> {
  const mode = modeOf(opts);
  const settingsFlag = opts.settings as string | undefined;
  const settingsFile = settingsFlag ? path.resolve(settingsFlag) : defaultSettingsPath();
  const stateFile = path.join(path.dirname(configPath()), 'claude-code-hook.json');
  if (mode === 'install') {
    const outcome = await installHook(settingsFile, await hookCommand(ctx, settingsFlag), stateFile);
    if (ctx.json) ctx.printJson({ settings: settingsFile, installed: true, changed: outcome.changed });
    else if (!outcome.changed) ctx.print(`The Cairn SessionEnd hook is already in ${settingsFile}.`);
    else {
      ctx.print(`Added a SessionEnd hook to ${settingsFile}: each ending session's transcript is pushed to Cairn.`);
      if (outcome.backup) ctx.note(`backup of the previous settings: ${outcome.backup}`);
      ctx.note('Transcripts are stored as they are: Cairn does not redact secrets in them.');
    }
    return;
  }
  if (mode === 'uninstall') {
    const outcome = await uninstallHook(settingsFile, stateFile);
    if (ctx.json) ctx.printJson({ settings: settingsFile, installed: false, changed: outcome.changed });
    else if (!outcome.changed) ctx.print(`No Cairn SessionEnd hook in ${settingsFile}; nothing to remove.`);
    else {
      ctx.print(`Removed the Cairn SessionEnd hook from ${settingsFile}.`);
      if (outcome.backup) ctx.note(`backup of the previous settings: ${outcome.backup}`);
    }
    return;
  }
  if (!ctx.settings.apiKey) throw new UsageError(missingKeyMessage(ctx.settings));
  const found = mode === 'hook' ? await fromHookInput(opts.fromHook as string) : await currentSession(opts);
  const record = await pushTranscript(ctx, found, mode === 'hook' ? 'end' : 'snapshot', opts);
  if (ctx.json) ctx.printJson(record);
  else {
    ctx.print(
      `${ctx.paint('cyan', record.artifact_id)}  ${record.filename}  ${formatBytes(record.size_bytes)}  ${ctx.paint('dim', `session ${found.sessionId}`)}`,
    );
  }
}

export interface Found {
  sessionId: string;
  file: string;
}

/** Claude Code's hook input: `{"session_id": …, "transcript_path": …, "hook_event_name": …}` on stdin. */
export async function fromHookInput(event: string): Promise<Found> {
  if (event !== 'end') throw new UsageError('--from-hook takes "end".');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  let input: unknown;
  try {
    input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new UsageError('--from-hook expects the hook input (JSON) on stdin.');
  }
  const { session_id: sessionId, transcript_path: file } = (input ?? {}) as Record<string, unknown>;
  if (typeof sessionId !== 'string' || typeof file !== 'string' || sessionId === '' || file === '') {
    throw new UsageError('the hook input has no session_id or transcript_path.');
  }
  return { sessionId, file };
}

/** Claude Code keeps a project's sessions in projects/<its path, every other character a dash>/. */
export function projectFolder(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(claudeDir(env), 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'));
}

/** The transcripts of a project folder, newest first. */
async function transcriptsIn(dir: string): Promise<{ file: string; mtime: number }[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const found = [];
  for (const name of names) {
    const file = path.join(dir, name);
    found.push({ file, mtime: (await stat(file)).mtimeMs });
  }
  return found.sort((a, b) => b.mtime - a.mtime);
}

/**
 * The environment variables a Claude Code session may name itself in, to the commands it runs.
 * Whichever is set names the session; none set means this process cannot tell which one it is in.
 */
export const SESSION_ID_VARIABLES = ['CLAUDE_SESSION_ID', 'CLAUDE_CODE_SESSION_ID'] as const;

/**
 * The session to snapshot: the one named (--transcript-path, --session-id), else the one the host
 * names in the environment, else the folder's only transcript. Never a guess among several: the
 * newest by mtime is often another session still running in the same folder.
 */
async function currentSession(opts: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): Promise<Found> {
  const explicit = nonEmpty(opts.transcriptPath as string | undefined);
  const fromEnv = SESSION_ID_VARIABLES.map((name) => nonEmpty(env[name])).find((v) => v !== undefined);
  const sessionId = nonEmpty(opts.sessionId as string | undefined) ?? fromEnv;
  if (explicit) return { file: explicit, sessionId: sessionId ?? path.basename(explicit, '.jsonl') };
  if (sessionId) {
    if (!/^[A-Za-z0-9-]+$/.test(sessionId)) throw new UsageError('--session-id is a Claude Code session id.');
    const projects = path.join(claudeDir(), 'projects');
    for (const dir of await readdir(projects).catch(() => [] as string[])) {
      const file = path.join(projects, dir, `${sessionId}.jsonl`);
      if (await stat(file).catch(() => null)) return { file, sessionId };
    }
    throw new UsageError(`no transcript of session ${sessionId} under ${projects}.`);
  }
  const dir = projectFolder(process.cwd());
  const found = await transcriptsIn(dir);
  const [only] = found;
  if (!only) {
    throw new UsageError(
      `no Claude Code transcript for this folder in ${dir}; pass --session-id or --transcript-path.`,
    );
  }
  if (found.length > 1) {
    const newest = found
      .slice(0, 3)
      .map((t) => `  ${path.basename(t.file, '.jsonl')}  (changed ${new Date(t.mtime).toISOString().slice(0, 19)}Z)`);
    throw new UsageError(
      [
        `${found.length} Claude Code sessions have transcripts for this folder, and nothing says which one this is ` +
          `(${SESSION_ID_VARIABLES.join(' and ')} are unset). Name it with --session-id <id> (in Claude Code, /status ` +
          'shows the session id) or --transcript-path <file>. The most recently changed:',
        ...newest,
      ].join('\n'),
    );
  }
  return { file: only.file, sessionId: path.basename(only.file, '.jsonl') };
}

/**
 * Pushes a copy of the transcript (Claude Code may still be appending to it: the upload's
 * declared length must hold), under a key derived from its content, so that a hook that fires
 * twice stores one artifact.
 */
async function pushTranscript(
  ctx: Ctx,
  found: Found,
  capture: 'end' | 'snapshot',
  opts: Record<string, unknown>,
): Promise<ArtifactRecord> {
  const dir = await mkdtemp(path.join(tmpdir(), 'cairn-capture-'));
  try {
    const copy = path.join(dir, 'transcript.jsonl');
    try {
      // Only regular files: a FIFO or device named as a transcript would hang or read forever.
      if (!(await stat(found.file)).isFile()) throw new UsageError(`${found.file} is not a regular file.`);
      await copyFile(found.file, copy);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      throw new UsageError(`cannot read the transcript ${found.file}: ${code ?? err}`);
    }
    const metadata = withTranscriptModels({ capture }, await scanTranscriptFile(copy)) ?? { capture };
    const upload: UploadOptions = {
      filename: `claude-code-${found.sessionId}.jsonl`,
      contentType: 'application/x-ndjson',
      sessionId: found.sessionId,
      agentId: nonEmpty(opts.agent as string | undefined) ?? nonEmpty(process.env.CAIRN_AGENT_ID) ?? 'claude-code',
      metadata,
      transcript: true,
    };
    const key = deriveIdempotencyKey({
      contentHash: await sha256File(copy),
      filename: upload.filename as string,
      sessionId: upload.sessionId,
      agentId: upload.agentId,
      contentType: upload.contentType,
      transcript: true,
      metadata,
    });
    return await ctx.client.uploadFile(copy, { ...upload, idempotencyKey: key });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
