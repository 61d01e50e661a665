import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  type ArtifactRecord,
  CairnError,
  deriveIdempotencyKey,
  deriveSuccessorKey,
  scanTranscriptFile,
  type UploadOptions,
  withTranscriptModels,
} from 'cairn-store-sdk';
import type { Command } from 'commander';
import { fitted } from '../help.js';
import { visible } from '../terminal-text.js';
import { UsageError } from '../usage-error.js';
import { nonEmpty } from './config-file.js';
import { type Ctx, clientAction, withClientOptions } from './context.js';
import { clip, formatBytes, terminalWidth } from './format.js';
import { collectMeta, parseTtl } from './parse.js';
import { createProgress } from './progress.js';
import { expandInputs, type PushInput } from './push-inputs.js';
import { type Attempt, type Pushed, sendResumable } from './push-resumable.js';

/** A derived key is followed past at most this many deleted artifacts (each push-rm-push adds one). */
const MAX_SUCCESSOR_HOPS = 100;

/**
 * Files larger than this go up resumably (tus) when the server offers it: an interrupted push of
 * a big file then goes on where it stopped. Smaller ones take one multipart request, as before.
 * CAIRN_RESUMABLE_THRESHOLD_BYTES overrides it (bytes).
 */
export const RESUMABLE_THRESHOLD_BYTES = 64 * 1024 * 1024;

/**
 * A resumable upload goes in one PATCH by default: the server hashes it as it lands and makes the
 * artifact without reading it again, while several pieces are read back and written once more at
 * the end (about 12 s per GiB on a busy 2-core machine). A dropped connection keeps what arrived
 * either way; only a server that crashes mid-PATCH loses that PATCH's bytes, which
 * CAIRN_RESUMABLE_CHUNK_BYTES (bytes per PATCH) bounds for those who would rather pay the end.
 */
export const RESUMABLE_CHUNK_BYTES = Number.POSITIVE_INFINITY;

/** How this push sends its files: the threshold, --no-resume, and whether the server has tus (asked once). */
interface UploadWay {
  threshold: number;
  resume: boolean;
  chunkSize: number;
  serverOffersTus(): Promise<boolean>;
}

export function registerPushCommand(program: Command): void {
  withClientOptions(
    program
      .command('push')
      .description('Upload one or more files (one artifact each). Re-running the same push never duplicates.')
      .argument('<files...>', 'files to upload; a folder with --recursive; - for stdin (with --name)')
      .option('-r, --recursive', 'push every file under the folders given (metadata.path: its path from the folder)')
      .option('--name <filename>', 'the stored filename (one input; required for - )')
      .option('--session <id>', 'session label')
      .option('--agent <id>', 'agent label (else CAIRN_AGENT_ID)')
      .option('--meta <key=value>', 'metadata pair (repeatable)', collectMeta)
      .option('--type <type>', 'sets metadata.type')
      .option('--ttl <ttl>', 'time to live: 12h, 30d or never (default 30d)', parseTtl)
      .option(
        '--transcript',
        'mark as a session transcript (metadata.type=transcript); model, model_source and models_used are read from it',
      )
      .option('--content-type <mime>', 'content type (default: from the file extension)')
      .option(
        '--idempotency-key <key>',
        'explicit Idempotency-Key (default: derived from the content and every option above)',
      )
      .option('--publish', 'publish each new artifact as an unlisted page after upload')
      .option('--title <title>', 'page title (implies --publish)')
      .option('--no-resume', 'start big files over: forget (and abandon) an interrupted upload of them')
      .addHelpText(
        'after',
        fitted(
          `
Re-running a push with the same file and options replays the first upload (for 24 hours) instead
of storing a second artifact; if that artifact has since been deleted or has expired, a new one
is stored. With several files and --json, one JSON record is printed per line as each completes.

Files over 64 MiB go up resumably when the server offers it: if the push is interrupted, running
the same push again goes on from the bytes the server already has (for 24 hours), instead of
starting over. --no-resume starts over. See docs/cli.md for where the upload state is kept.`,
        ),
      ),
    [
      'cairn push report.md',
      'cairn push out/*.png --session run-42 --meta model=gpt-5 --ttl 7d',
      'cairn push session.ndjson --transcript --session run-42',
      'cairn push summary.md --title "Weekly summary"      # upload and publish',
      'cairn push data.csv --json | jq -r .artifact_id',
      'cairn push a.txt b.txt --json | jq -r .artifact_id   # one line per file',
      'cairn push out/ --recursive --session run-42',
      'make-report | cairn push - --name report.md',
    ],
  ).action(clientAction(push));
}

async function push(ctx: Ctx, args: unknown[], opts: Record<string, unknown>): Promise<void> {
  const { inputs, cleanup } = await expandInputs((args[0] as string[]) ?? [], {
    recursive: opts.recursive === true,
    name: opts.name as string | undefined,
  });
  try {
    await pushAll(ctx, inputs, opts);
  } finally {
    await cleanup();
  }
}

async function pushAll(ctx: Ctx, inputs: PushInput[], opts: Record<string, unknown>): Promise<void> {
  const explicitKey = opts.idempotencyKey as string | undefined;
  if (explicitKey !== undefined && inputs.length > 1) {
    throw new UsageError('--idempotency-key names one upload; push one file at a time to use it.');
  }
  const base = uploadOptions(opts);
  const way = uploadWay(ctx, opts.resume !== false);
  const title = opts.title as string | undefined;
  const publish = opts.publish === true || title !== undefined;

  // Lines are printed as files complete, so they are aligned on what is known before: the names.
  const nameWidth = Math.min(NAME_WIDTH, Math.max(...inputs.map((i) => visible(i.filename).length)));
  for (const input of inputs) {
    const { file, filename } = input;
    const upload: UploadOptions = { ...base, filename };
    if (input.relativePath !== undefined && upload.metadata?.path === undefined) {
      upload.metadata = { ...upload.metadata, path: input.relativePath };
    }
    if (upload.transcript) upload.metadata = withTranscriptModels(upload.metadata, await scanTranscriptFile(file));
    const key =
      explicitKey ??
      deriveIdempotencyKey({
        contentHash: await hashShowingProgress(file, filename, input.size),
        filename,
        sessionId: upload.sessionId,
        agentId: upload.agentId,
        contentType: upload.contentType,
        ttl: upload.ttl,
        transcript: upload.transcript,
        metadata: upload.metadata,
      });
    const pushed = await pushFile(ctx, input, upload, key, explicitKey === undefined, way);
    let record = pushed.record;
    if (publish) record = await publishNew(ctx, pushed, title);
    // Printed as each file completes, so a later failure never hides what was already stored.
    if (ctx.json) {
      if (inputs.length === 1) ctx.printJson(record);
      else ctx.print(JSON.stringify(record));
    } else {
      ctx.print(pushedLine(ctx, record, pushed.replayed, nameWidth));
      if (record.page) ctx.print(`  page: ${ctx.paint('green', record.page.public_url)}`);
    }
  }
}

/**
 * The file's SHA-256 (for the derived Idempotency-Key), read before anything is sent: about 2.5 s
 * for 100 MB on a busy machine, so a big file shows a bar for it (on a terminal) instead of a
 * blank screen; the bar is cleared once the hash is known.
 */
async function hashShowingProgress(file: string, filename: string, size: number): Promise<string> {
  const progress = createProgress(`hashing ${filename}`, size);
  try {
    const hash = createHash('sha256');
    let read = 0;
    for await (const chunk of createReadStream(file)) {
      hash.update(chunk as Buffer);
      read += (chunk as Buffer).length;
      progress.update(read);
    }
    return hash.digest('hex');
  } finally {
    progress.abort();
  }
}

const NAME_WIDTH = 40;
const SIZE_WIDTH = 9;
/** What the type keeps when a name is cut to fit: "application/json". */
const TYPE_ROOM = 16;

/**
 * `art_…  name  size  type`, columns aligned across the files of one push, cut to the terminal's
 * width: the name first (to 10 characters), then the type.
 */
function pushedLine(ctx: Ctx, record: ArtifactRecord, replayed: boolean, nameWidth: number): string {
  const note = replayed ? '  (already pushed)' : '';
  const name = visible(record.filename);
  const type = visible(record.content_type);
  const width = terminalWidth();
  let nameCell = Math.max(nameWidth, Math.min(name.length, NAME_WIDTH));
  let typeCell = type.length;
  if (width !== undefined) {
    // The same for every line of the push (the id and size widths are fixed), so they stay aligned.
    const fixed = record.artifact_id.length + SIZE_WIDTH + 6;
    nameCell = Math.max(10, Math.min(nameCell, width - 1 - fixed - TYPE_ROOM));
    typeCell = Math.max(4, Math.min(typeCell, width - 1 - fixed - nameCell - note.length));
  }
  return [
    ctx.paint('cyan', record.artifact_id),
    clip(name, nameCell).padEnd(nameCell),
    formatBytes(record.size_bytes).padStart(SIZE_WIDTH),
    `${ctx.paint('dim', clip(type, typeCell))}${note && ctx.paint('dim', note)}`,
  ].join('  ');
}

/** The resumable threshold (CAIRN_RESUMABLE_THRESHOLD_BYTES or 64 MiB); the server is asked about tus at most once. */
function uploadWay(ctx: Ctx, resume: boolean): UploadWay {
  const threshold = bytesSetting('CAIRN_RESUMABLE_THRESHOLD_BYTES', RESUMABLE_THRESHOLD_BYTES, 0);
  const chunkSize = bytesSetting('CAIRN_RESUMABLE_CHUNK_BYTES', RESUMABLE_CHUNK_BYTES, 1);
  let offered: Promise<boolean> | undefined;
  return {
    threshold,
    resume,
    chunkSize,
    // An older Cairn answers 404: its files go up as one multipart request, as they always did.
    serverOffersTus: () => {
      offered ??= ctx.client.resumableUploadSupport().then((support) => support !== null);
      return offered;
    },
  };
}

/** A byte count from the environment, else `fallback`; anything but a whole number >= `min` is a usage error. */
function bytesSetting(name: string, fallback: number, min: number): number {
  const raw = nonEmpty(process.env[name]);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`${name} must be a whole number of bytes (at least ${min}), not "${raw}".`);
  }
  return n;
}

/** The options every file of this push shares, from the flags and CAIRN_AGENT_ID. */
function uploadOptions(opts: Record<string, unknown>): UploadOptions {
  const upload: UploadOptions = {};
  const metadata: Record<string, unknown> = Object.fromEntries((opts.meta as [string, string][] | undefined) ?? []);
  if (typeof opts.type === 'string') metadata.type = opts.type;
  const sessionId = opts.session as string | undefined;
  const agentId = (opts.agent as string | undefined) ?? nonEmpty(process.env.CAIRN_AGENT_ID);
  if (sessionId) upload.sessionId = sessionId;
  if (agentId) upload.agentId = agentId;
  if (Object.keys(metadata).length > 0) upload.metadata = metadata;
  if (opts.ttl) upload.ttl = opts.ttl as string;
  if (opts.transcript) upload.transcript = true;
  if (opts.contentType) upload.contentType = opts.contentType as string;
  return upload;
}

/**
 * Uploads one file. A replay of an artifact that has since been deleted or has expired would
 * report a success for something gone: with a derived key the file is pushed again under
 * deriveSuccessorKey(key, dead id), which stays deterministic for the next re-run; with an
 * explicit key that is the user's to change, so it is an error.
 */
async function pushFile(
  ctx: Ctx,
  input: PushInput,
  upload: UploadOptions,
  firstKey: string,
  derived: boolean,
  way: UploadWay,
): Promise<Pushed> {
  let key = firstKey;
  // The gone artifacts the key led to (null: a gone upload the server did not name).
  const dead: (string | null)[] = [];
  for (;;) {
    const attempt =
      input.size > way.threshold && (await way.serverOffersTus())
        ? await sendResumable(ctx, input, upload, key, way)
        : await sendMultipart(ctx, input, upload, key);
    if ('record' in attempt) {
      // Said only when something new was stored: a re-run that replays the successor stays quiet.
      if (!attempt.replayed && dead.length > 0) {
        const named = dead.filter((id): id is string => id !== null);
        const earlier =
          named.length === 0
            ? 'upload is'
            : named.length === 1
              ? `upload ${named[0]} is`
              : `uploads ${named.join(', ')} are`;
        ctx.note(`${upload.filename}: the earlier ${earlier} gone; stored it again as ${attempt.record.artifact_id}.`);
      }
      return attempt;
    }
    const { gone, successorOf, deadId } = attempt;
    if (!derived) {
      const why = gone.code === 'artifact_expired' ? 'has expired' : gone.status === 404 ? 'is gone' : 'was deleted';
      const what = deadId === null ? 'an upload' : deadId;
      ctx.note(`--idempotency-key ${key} replays ${what}, which ${why}; pass a new key to store it again.`);
      throw gone;
    }
    if (dead.length >= MAX_SUCCESSOR_HOPS) throw gone;
    dead.push(deadId);
    key = deriveSuccessorKey(key, successorOf);
  }
}

/** One multipart POST; a replay is looked up, since its record is the one stored then. */
async function sendMultipart(ctx: Ctx, input: PushInput, upload: UploadOptions, key: string): Promise<Attempt> {
  let replayed = false;
  const progress = createProgress(`push ${upload.filename}`, input.size);
  let record: ArtifactRecord;
  try {
    record = await ctx.client.uploadFile(input.file, {
      ...upload,
      idempotencyKey: key,
      onProgress: (sent, total) => progress.update(sent, total),
      onResponse: (r) => {
        replayed = r.replayed;
      },
    });
    if (replayed) progress.stop('already on the server');
    else progress.finish();
  } catch (err) {
    progress.abort();
    throw err;
  }
  if (!replayed) return { record, replayed, current: null };
  const { current, gone } = await lookUp(ctx, record.artifact_id);
  if (current) return { record, replayed, current };
  return { gone, successorOf: record.artifact_id, deadId: record.artifact_id };
}

/** A replayed artifact as it is now: its record while live, else the 410 it answers with. */
async function lookUp(
  ctx: Ctx,
  id: string,
): Promise<{ current: ArtifactRecord; gone?: never } | { current?: never; gone: CairnError }> {
  try {
    return { current: await ctx.client.getArtifact(id) };
  } catch (err) {
    if (err instanceof CairnError && err.status === 410) return { gone: err };
    throw err;
  }
}

/**
 * Publishes a freshly pushed artifact. A replayed one that already has a page keeps it as it is
 * (publishing again would replace its settings, e.g. drop a password); `cairn publish` changes it.
 */
async function publishNew(ctx: Ctx, pushed: Pushed, title: string | undefined): Promise<ArtifactRecord> {
  const id = pushed.record.artifact_id;
  if (pushed.current?.page) {
    ctx.note(`${id} is already published; its page is unchanged (\`cairn publish ${id}\` changes it).`);
    return pushed.current;
  }
  await ctx.client.publish(id, title === undefined ? {} : { title });
  // The single GET carries the live page, so --json still prints an exact API body.
  return ctx.client.getArtifact(id);
}
