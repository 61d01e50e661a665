import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  type ArtifactRecord,
  CairnError,
  scanTranscriptText,
  type TranscriptModels,
  type UploadStreamOptions,
  withTranscriptModels,
} from 'cairn-store-sdk';
import { nodeCrypto, TranscriptModelScanner } from 'cairn-store-sdk/internal';
import { z } from 'zod';
import { decodeBase64Text } from '../shared/base64.js';
import { formatCount } from '../shared/units.js';
import {
  INLINE_LIMIT_TEXT,
  INLINE_UPLOAD_BYTES,
  SINGLE_LIMIT_TEXT,
  SINGLE_UPLOAD_BYTES,
} from '../shared/upload-limits.js';
import { agentId, defineTool, idempotencyKey, metadataObject, sessionId, type ToolContext, ttl } from './context.js';
import { exampleCall, fail, failureFrom, invalid, ok } from './results.js';
import { secretChecked } from './secret-content.js';

const LONE_SURROGATE = /\p{Cs}/u;

/** agent_id default: the connected client's name made into a valid label, else `mcp`. */
export function defaultAgentId(ctx: ToolContext): string {
  const name = (ctx.clientInfo?.name ?? '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 128);
  return name === '' ? 'mcp' : name;
}

export const storeArtifact = defineTool({
  name: 'store_artifact',
  title: 'Store an artifact',
  description: (_listed, where) =>
    'Save a file to Cairn so it outlives this conversation: reports, generated code, images, datasets, ' +
    'transcripts. Give exactly one of ' +
    (where === 'local'
      ? `\`text\` (UTF-8 text as is), \`content\` (base64 bytes; both up to ${INLINE_LIMIT_TEXT}) or \`path\` (a local ` +
        `file under the folders the user allowed, up to ${SINGLE_LIMIT_TEXT}; streamed from disk, so prefer it for ` +
        "anything already on disk), and `filename` (with `path`, the file's own name unless given). "
      : `\`text\` (UTF-8 text as is) or \`content\` (base64 bytes), up to ${INLINE_LIMIT_TEXT}, and \`filename\`. `) +
    'Group related outputs with `session_id`; record the producing model with `model` (saved as ' +
    'metadata.model); set `transcript: true` for a conversation log (NDJSON recommended): its models are read ' +
    'into metadata (model: the last main-loop model, models_used: every model, sorted). Every call creates ' +
    'a new artifact. If you might repeat this call (a timeout, a lost answer), pass your own ' +
    '`idempotency_key`, a new one for each distinct file (e.g. a fresh UUID; kept 24 hours): a repeat with ' +
    'the same key returns the first artifact, marked replayed, instead of storing a second. Without a key, ' +
    'the answer notes an artifact with the same bytes, filename and session stored in the last 24 hours. ' +
    (where === 'local'
      ? `For files over ${SINGLE_LIMIT_TEXT} use request_upload_url.`
      : `For files over ${INLINE_LIMIT_TEXT} use request_upload_url.`),
  example: {
    filename: 'report.md',
    text: '# Report\nAll green.\n',
    session_id: 'run-2026-11-26',
    idempotency_key: '0f8fad5b-d9cb-469f-a165-70867728950e',
  },
  tier: 'write',
  destructive: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  localArgs: ['path'],
  input: {
    filename: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe(
        "Name to store the file under, e.g. report.md; required with text or content (with path: the file's name).",
      ),
    text: z
      .string()
      .optional()
      .describe(
        `The file as UTF-8 text, as is (up to ${INLINE_LIMIT_TEXT}), e.g. "# Report\\nAll green.". For text files.`,
      ),
    content: z
      .string()
      .optional()
      .describe(
        `The bytes, base64-encoded (up to ${INLINE_LIMIT_TEXT} decoded), e.g. "IyBSZXBvcnQK" for "# Report\\n".`,
      ),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('Local file path, relative to the server working directory, e.g. out/report.md.'),
    content_type: z.string().min(1).optional().describe('MIME type; default from the extension, e.g. text/markdown.'),
    session_id: sessionId.optional(),
    agent_id: agentId
      .optional()
      .describe('Producing agent label, e.g. "research-bot"; default the MCP client\'s name when known, else "mcp".'),
    model: z
      .string()
      .min(1)
      .optional()
      .describe('Producing model id, e.g. "claude-sonnet-4"; stored as metadata.model unless set.'),
    metadata: metadataObject.optional(),
    ttl: ttl.optional(),
    transcript: z
      .boolean()
      .optional()
      .describe(
        'Mark as a session transcript: metadata type=transcript, plus model, model_source and models_used read from it.',
      ),
    idempotency_key: idempotencyKey
      .optional()
      .describe(
        'Pass your own when you may repeat the call, a new one for each distinct file, e.g. a fresh UUID; ' +
          '1-256 printable ASCII.',
      ),
  },
  async run(args, ctx): Promise<CallToolResult> {
    const given = [args.text, args.content, args.path].filter((v) => v !== undefined).length;
    if (given !== 1) {
      return invalid(
        `store_artifact needs exactly one of \`text\` (UTF-8), \`content\` (base64)${
          ctx.openLocalFile ? ' or `path` (local file)' : ''
        }; got ${given}. ${exampleCall(storeArtifact)}`,
      );
    }
    const filename = args.filename ?? (args.path !== undefined ? basename(args.path) : undefined);
    if (filename === undefined || filename === '') {
      return invalid(
        `store_artifact needs \`filename\` with \`text\` or \`content\` (with \`path\` it is the file's name). ${exampleCall(storeArtifact)}`,
      );
    }
    const key = args.idempotency_key ?? nodeCrypto().randomUUID();
    const meta = { idempotency_key: key };
    const metadata: Record<string, unknown> = { ...args.metadata };
    if (args.model !== undefined && metadata.model === undefined) metadata.model = args.model;
    let replayed = false;
    const opts = {
      filename,
      contentType: args.content_type,
      sessionId: args.session_id,
      agentId: args.agent_id ?? defaultAgentId(ctx),
      metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
      ttl: args.ttl,
      transcript: args.transcript,
      idempotencyKey: key,
      onResponse: (info: { replayed: boolean }) => {
        replayed = info.replayed;
      },
    };
    const stored = async (record: ArtifactRecord): Promise<CallToolResult> => {
      if (replayed) return withNote(ok(record, { ...meta, replayed: true }), replayNote(record, { ...args, filename }));
      // Only the caller's own key protects a repeat it did not see answered; without one, say so.
      const twin = args.idempotency_key === undefined ? await earlierCopy(ctx.client, record) : null;
      if (!twin) return ok(record, meta);
      return withNote(
        ok(record, { ...meta, possible_duplicate_of: twin }),
        `Stored as ${record.artifact_id}. An artifact with the same bytes, filename and session was stored in ` +
          `the last 24 hours: ${twin}. If that was an earlier attempt of this call, one of them is a duplicate ` +
          '(pass your own idempotency_key next time).',
      );
    };
    try {
      if (args.path !== undefined) {
        if (!ctx.openLocalFile) {
          return invalid(
            '`path` uploads need the local (stdio) Cairn MCP server; send the file as `text` or `content`.',
          );
        }
        return await stored(await uploadPath(ctx.openLocalFile, ctx.client, args.path, opts));
      }
      // UTF-8 has no bytes for half a surrogate pair; the encoder would store U+FFFD instead.
      if (args.text !== undefined && LONE_SURROGATE.test(args.text)) {
        return invalid(
          '`text` holds an unpaired surrogate (such as "\\ud800"), which is not Unicode text; send the file as `content` (base64) if it is not text.',
        );
      }
      const bytes = args.text !== undefined ? Buffer.from(args.text, 'utf8') : decodeBase64Text(args.content as string);
      if (bytes === null) {
        return invalid(
          '`content` is not base64: the standard alphabet (A-Z a-z 0-9 + /), padding optional, line breaks ' +
            'allowed, no spaces. If it is text, pass it as `text` instead; base64 looks like "IyBSZXBvcnQK".',
        );
      }
      if (bytes.length > INLINE_UPLOAD_BYTES) {
        return fail(
          `the file is ${formatCount(bytes.length)} bytes; the limit here is ${INLINE_LIMIT_TEXT}.${
            ctx.openLocalFile ? ' Write it to a file and pass `path`.' : ' Use request_upload_url (Pro).'
          }`,
          { status: 413, code: 'file_too_large', retry_hint: 'fix_arguments', ...meta },
        );
      }
      return await stored(await ctx.client.uploadBytes(bytes, opts));
    } catch (err) {
      return failureFrom(err, { keyHint: ctx.keyHint, meta, args });
    }
  },
});

/** Said in the text (hosts often show the model only that): nothing new was stored. */
function replayNote(record: ArtifactRecord, args: { filename: string; session_id?: string }): string {
  const same = record.filename === args.filename && record.session_id === (args.session_id ?? null);
  return same
    ? `Replayed: this idempotency_key was used before, so the artifact stored then (${record.artifact_id}) is ` +
        'returned and nothing new was stored.'
    : `Replayed: this idempotency_key was used before for another file (${JSON.stringify(record.filename)}, ` +
        `session ${JSON.stringify(record.session_id)}), so that artifact (${record.artifact_id}) is returned and ` +
        'nothing was stored for this call. Use a new idempotency_key for each distinct file.';
}

/** A second text block after the JSON, for the model to read; structuredContent stays the record. */
function withNote(result: CallToolResult, note: string): CallToolResult {
  return { ...result, content: [...result.content, { type: 'text', text: note }] };
}

const DAY_MS = 86_400_000;
/** Copies looked at; more same-named uploads in a day than this is not a repeat by accident. */
const TWIN_PAGE = 20;

/**
 * Another live artifact of the last 24 hours with the same bytes, filename and session, if any:
 * a hint that an earlier call whose answer was lost did store the file. Best effort (one list
 * call); a failure of this check never fails the upload that succeeded.
 */
async function earlierCopy(client: ToolContext['client'], record: ArtifactRecord): Promise<string | null> {
  try {
    const page = await client.listArtifacts({
      filename: record.filename,
      sessionId: record.session_id ?? undefined,
      createdAfter: new Date(Date.parse(record.created_at) - DAY_MS).toISOString(),
      limit: TWIN_PAGE,
    });
    const twin = page.artifacts.find(
      (a) =>
        a.artifact_id !== record.artifact_id &&
        a.content_hash === record.content_hash &&
        a.session_id === record.session_id,
    );
    return twin?.artifact_id ?? null;
  } catch {
    return null;
  }
}

/** Attempts after the first for a path upload, as the SDK makes for its idempotent calls. */
const PATH_RETRIES = 3;
/** A longer Retry-After is not worth sleeping through inside a tool call. */
const MAX_RETRY_WAIT_S = 60;

/**
 * A path upload, streamed from disk. The SDK cannot retry a stream it was handed, so this does:
 * on a 5xx, a network failure or a 429, the file is opened again through the same confinement
 * (checked again, a fresh handle) and sent again with the same Idempotency-Key, so a repeat of an
 * upload that did reach the server returns the artifact it made instead of a second one.
 */
async function uploadPath(
  openLocalFile: NonNullable<ToolContext['openLocalFile']>,
  client: ToolContext['client'],
  filePath: string,
  opts: Omit<UploadStreamOptions, 'size'>,
): Promise<ArtifactRecord> {
  let scanned = !opts.transcript;
  for (let attempt = 0; ; attempt++) {
    const file = await openLocalFile(filePath);
    try {
      if (file.size > SINGLE_UPLOAD_BYTES) {
        throw new CairnError({
          code: 'file_too_large',
          message: `${filePath} is ${formatCount(file.size)} bytes; the limit is ${SINGLE_LIMIT_TEXT}. Use request_upload_url (Pro).`,
          status: 413,
        });
      }
      if (!scanned) {
        // The models are metadata, sent before the bytes: one read of the file for them first.
        opts = { ...opts, metadata: withTranscriptModels(opts.metadata, await scanHandle(file.handle, file.size)) };
        scanned = true;
      }
      const stream = file.handle.createReadStream({ start: 0, autoClose: false });
      // A secret in the bytes fails the stream before its chunk is sent, so nothing is stored.
      const checked = secretChecked(stream, filePath);
      try {
        return await client.uploadStream(checked.body, { ...opts, size: file.size });
      } catch (err) {
        throw checked.refusal() ?? err;
      }
    } catch (err) {
      const wait = attempt < PATH_RETRIES ? retryWaitMs(err, attempt) : null;
      if (wait === null) throw err;
      await sleep(wait);
    } finally {
      await file.handle.close().catch(() => {});
    }
  }
}

/**
 * The models a transcript file names, read through the handle path confinement opened, as the
 * SDK's scanTranscriptFile reads a path: line by line, then (a JSON array or `{"messages": […]}`
 * up to WHOLE_JSON_MAX_BYTES) as one document when no line named a model.
 */
async function scanHandle(handle: FileHandle, size: number): Promise<TranscriptModels> {
  const { createInterface } = await import('node:readline');
  const read = () => handle.createReadStream({ start: 0, autoClose: false, encoding: 'utf8' });
  const scanner = new TranscriptModelScanner();
  for await (const line of createInterface({ input: read(), crlfDelay: Number.POSITIVE_INFINITY })) {
    scanner.addLine(line);
  }
  const found = scanner.result();
  if (found.modelsUsed.length > 0 || size > WHOLE_JSON_MAX_BYTES) return found;
  let text = '';
  for await (const chunk of read()) text += chunk;
  return scanTranscriptText(text);
}

const WHOLE_JSON_MAX_BYTES = 32 * 1024 * 1024;

/** How long to wait before repeating after `err`, or null when repeating cannot help. */
function retryWaitMs(err: unknown, attempt: number): number | null {
  if (!(err instanceof CairnError)) return null;
  if (err.status === 429) return Math.min(err.retryAfter ?? 1, MAX_RETRY_WAIT_S) * 1000;
  if (err.status === 0 || err.status >= 500) return Math.min(200 * 2 ** attempt, 5_000);
  return null;
}
