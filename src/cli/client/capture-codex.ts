import path from 'node:path';
import type { Command } from 'commander';
import { fitted } from '../help.js';
import { UsageError } from '../usage-error.js';
import { codexHome, rolloutFiles, scanRollout } from './codex-rollout.js';
import { nonEmpty } from './config-file.js';
import { type Ctx, clientAction, withClientOptions } from './context.js';
import { missingKeyMessage } from './settings.js';
import { capturedMetadata, printCaptured, pushTranscriptCopy } from './transcript-upload.js';

/**
 * `cairn capture codex`: pushes a Codex CLI session rollout as a transcript, with the models its
 * turns ran on (the same rule as Claude Code's: `model` is the last main-loop model,
 * `models_used` every one, sorted). No hook is installed: Codex's `notify` program runs after
 * every turn, not when a session ends, so a capture per turn would store each grown rollout anew.
 */
export function registerCodexCapture(capture: Command): void {
  withClientOptions(
    capture
      .command('codex')
      .description("Push a Codex CLI session's rollout as a transcript (default: the newest one of this folder).")
      .option('--session-id <id>', 'the Codex session to push (its id, as in the rollout file name)')
      .option('--transcript-path <file>', 'the rollout file to push')
      .option('--agent <id>', 'agent label (else CAIRN_AGENT_ID, else codex)')
      .addHelpText(
        'after',
        fitted(
          `
Rollouts are read from $CODEX_HOME/sessions (default ~/.codex/sessions). The push carries the
session id as --session, metadata capture=snapshot, and model, model_source=transcript and
models_used read from the rollout's turns. Pushing the same rollout again stores nothing new; a
rollout that grew since is a new artifact. Transcripts are stored as they are: Cairn does not
redact secrets in them.`,
        ),
      ),
    [
      'cairn capture codex',
      'cairn capture codex --session-id 01a23491-412c-7863-a91f-e4da41e16c7e',
      'cairn capture codex --transcript-path ./rollout.jsonl --json',
    ],
  ).action(clientAction(captureCodex, { needsKey: false }));
}

async function captureCodex(ctx: Ctx, _args: unknown[], opts: Record<string, unknown>): Promise<void> {
  if (!ctx.settings.apiKey) throw new UsageError(missingKeyMessage(ctx.settings));
  const file = await findRollout(opts);
  const record = await pushTranscriptCopy(ctx, file, async (copy) => {
    const rollout = await scanRollout(copy);
    const sessionId = rollout.sessionId ?? sessionIdFromName(file);
    if (!sessionId) throw new UsageError(`${file} is not a Codex rollout: it has no session_meta with an id.`);
    const metadata = capturedMetadata('snapshot', rollout);
    return {
      filename: `codex-${sessionId}.jsonl`,
      contentType: 'application/x-ndjson',
      sessionId,
      agentId: nonEmpty(opts.agent as string | undefined) ?? nonEmpty(process.env.CAIRN_AGENT_ID) ?? 'codex',
      metadata,
    };
  });
  printCaptured(ctx, record);
}

const SESSION_IN_NAME = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;
const sessionIdFromName = (file: string) => SESSION_IN_NAME.exec(path.basename(file))?.[1] ?? null;

async function findRollout(opts: Record<string, unknown>): Promise<string> {
  const explicit = nonEmpty(opts.transcriptPath as string | undefined);
  if (explicit) return explicit;
  const home = codexHome();
  const files = await rolloutFiles(home);
  const sessionId = nonEmpty(opts.sessionId as string | undefined);
  if (sessionId) {
    if (!/^[A-Za-z0-9-]+$/.test(sessionId)) throw new UsageError('--session-id is a Codex session id.');
    const file = files.find((f) => sessionIdFromName(f) === sessionId);
    if (!file) throw new UsageError(`no rollout of session ${sessionId} under ${path.join(home, 'sessions')}.`);
    return file;
  }
  // The newest rollout that ran in this folder (its session_meta says where).
  const here = process.cwd();
  for (const file of files) if ((await scanRollout(file, true)).cwd === here) return file;
  throw new UsageError(
    `no Codex rollout of this folder under ${path.join(home, 'sessions')}; pass --session-id or --transcript-path.`,
  );
}
