import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { fitted } from '../help.js';
import { UsageError } from '../usage-error.js';
import { fromHookInput } from './capture.js';
import { type HookFlavor, installHook, uninstallHook } from './claude-settings.js';
import { configPath, nonEmpty } from './config-file.js';
import { type Ctx, clientAction, withClientOptions } from './context.js';
import { geminiDir, newestChatOf, scanGeminiChat } from './gemini-chat.js';
import { missingKeyMessage } from './settings.js';
import { capturedMetadata, printCaptured, pushTranscriptCopy } from './transcript-upload.js';

/**
 * `cairn capture gemini`: Gemini CLI chat logs. `--install` adds a SessionEnd hook to Gemini
 * CLI's settings (merged as Claude Code's are, see claude-settings.ts) that pushes each ending
 * session's log (`capture=end`); `--snapshot` pushes the current one now (`capture=snapshot`).
 * Models follow Claude Code's rule: `model` the last answer's, `models_used` every one, sorted.
 */

const MARKER = 'capture gemini --from-hook end';
/** Gemini CLI's hooks default to a 60 s budget, enough for a push: no `timeout` of our own. */
const GEMINI_HOOK: HookFlavor = { marker: MARKER, group: (command) => ({ hooks: [{ type: 'command', command }] }) };

export function registerGeminiCapture(capture: Command): void {
  withClientOptions(
    capture
      .command('gemini')
      .description("Push Gemini CLI chat logs: a SessionEnd hook in Gemini CLI's settings, or a snapshot now.")
      .option('--install', "add a SessionEnd hook to Gemini CLI's settings (merged; a backup is kept)")
      .option('--uninstall', 'remove exactly what --install added')
      .option('--snapshot', "push the current session's chat log now (metadata capture=snapshot)")
      .option('--from-hook <event>', "the hook's own entry point: reads Gemini CLI's hook input on stdin")
      .option('--settings <file>', 'settings file (default: ~/.gemini/settings.json)')
      .option('--transcript-path <file>', 'with --snapshot: the chat log to push')
      .option('--agent <id>', 'agent label (else CAIRN_AGENT_ID, else gemini-cli)')
      .addHelpText(
        'after',
        fitted(
          `
The hook runs \`cairn capture gemini --from-hook end\` when a session ends and pushes the session's
chat log as a transcript: the session id as --session, metadata capture=end, plus model,
model_source=transcript and models_used read from the log. It uses your saved login (\`cairn
login\`); no key is written to the settings file. Transcripts are stored as they are: Cairn does
not redact secrets in them.`,
        ),
      ),
    ['cairn capture gemini --install', 'cairn capture gemini --snapshot', 'cairn capture gemini --uninstall'],
  ).action(clientAction(captureGemini, { needsKey: false }));
}

type Mode = 'install' | 'uninstall' | 'snapshot' | 'hook';

function modeOf(opts: Record<string, unknown>): Mode {
  const chosen: Mode[] = (['install', 'uninstall', 'snapshot'] as const).filter((m) => opts[m] === true);
  if (opts.fromHook !== undefined) chosen.push('hook');
  if (chosen.length !== 1) throw new UsageError('pass exactly one of --install, --uninstall or --snapshot.');
  return chosen[0] as Mode;
}

const shellQuote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

async function captureGemini(ctx: Ctx, _args: unknown[], opts: Record<string, unknown>): Promise<void> {
  const mode = modeOf(opts);
  const settingsFlag = opts.settings as string | undefined;
  const settingsFile = settingsFlag ? path.resolve(settingsFlag) : path.join(geminiDir(), 'settings.json');
  const stateFile = path.join(path.dirname(configPath()), 'gemini-hook.json');
  if (mode === 'install' || mode === 'uninstall') {
    // This Node and this `cairn` by absolute path: the hook works whatever PATH Gemini CLI has.
    const parts = [process.execPath, await realpath(process.argv[1] ?? 'cairn'), ...MARKER.split(' ')];
    if (ctx.settings.profileFlag) parts.push('--profile', ctx.settings.profile);
    if (settingsFlag) parts.push('--settings', settingsFile);
    const outcome =
      mode === 'install'
        ? await installHook(settingsFile, parts.map(shellQuote).join(' '), stateFile, GEMINI_HOOK)
        : await uninstallHook(settingsFile, stateFile, GEMINI_HOOK);
    const installed = mode === 'install';
    if (ctx.json) ctx.printJson({ settings: settingsFile, installed, changed: outcome.changed });
    else if (!outcome.changed) {
      ctx.print(
        installed
          ? `The Cairn SessionEnd hook is already in ${settingsFile}.`
          : `No Cairn SessionEnd hook in ${settingsFile}; nothing to remove.`,
      );
    } else {
      ctx.print(
        installed
          ? `Added a SessionEnd hook to ${settingsFile}: each ending session's chat log is pushed to Cairn.`
          : `Removed the Cairn SessionEnd hook from ${settingsFile}.`,
      );
      if (outcome.backup) ctx.note(`backup of the previous settings: ${outcome.backup}`);
      if (installed) ctx.note('Transcripts are stored as they are: Cairn does not redact secrets in them.');
    }
    return;
  }
  if (!ctx.settings.apiKey) throw new UsageError(missingKeyMessage(ctx.settings));
  const found = mode === 'hook' ? await fromHookInput(opts.fromHook as string) : await currentChat(opts);
  const capture = mode === 'hook' ? 'end' : 'snapshot';
  const record = await pushTranscriptCopy(ctx, found.file, async (copy) => {
    const chat = await scanGeminiChat(copy);
    const sessionId = found.sessionId ?? chat.sessionId;
    if (!sessionId) throw new UsageError(`${found.file} is not a Gemini CLI chat log: it names no session.`);
    const metadata = capturedMetadata(capture, chat);
    return {
      filename: `gemini-${sessionId}.jsonl`,
      contentType: 'application/x-ndjson',
      sessionId,
      agentId: nonEmpty(opts.agent as string | undefined) ?? nonEmpty(process.env.CAIRN_AGENT_ID) ?? 'gemini-cli',
      metadata,
    };
  });
  printCaptured(ctx, record);
}

async function currentChat(opts: Record<string, unknown>): Promise<{ file: string; sessionId: null }> {
  const explicit = nonEmpty(opts.transcriptPath as string | undefined);
  if (explicit) return { file: explicit, sessionId: null };
  const file = await newestChatOf(process.cwd());
  if (!file) {
    throw new UsageError(
      `no Gemini CLI chat log for this folder under ${path.join(geminiDir(), 'tmp')}; pass --transcript-path.`,
    );
  }
  return { file, sessionId: null };
}
