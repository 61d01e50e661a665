import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type ArtifactRecord, CairnError, type UploadStreamOptions } from '../client/index.js';
import { agentId, defineTool, metadataObject, sessionId, type ToolContext, ttl } from './context.js';
import { fail, failureFrom, invalid, ok } from './results.js';

const JSON_UPLOAD_MAX = 10 * 1024 * 1024;
const PATH_UPLOAD_MAX = 500 * 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

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
  description:
    'Save a file to Cairn so it outlives this conversation: reports, generated code, images, datasets, ' +
    'transcripts. Give `filename` and exactly one of `content` (base64 bytes, up to 10 MB decoded) or ' +
    '`path` (a local file under the directories the user allowed, up to 500 MB; streamed from disk, so ' +
    'prefer it for anything already on disk). Group related outputs with `session_id`; record the producing ' +
    'model with `model` (saved as metadata.model); set `transcript: true` for a conversation log (NDJSON ' +
    'recommended). Every call creates a new artifact. If you might repeat this call (a timeout, a lost ' +
    'answer), pass your own `idempotency_key` (any unique string, e.g. a UUID, kept for 24 hours): a repeat ' +
    'with the same key returns the first artifact (_meta.replayed: true) instead of storing a second. Without ' +
    'one a key is generated (_meta.idempotency_key), which helps only if you received this answer; a stored ' +
    'copy of the same bytes, filename and session from the last 24 hours is then named in ' +
    '_meta.possible_duplicate_of. For files over 500 MB use request_upload_url.',
  example: {
    filename: 'report.md',
    content: 'IyBSZXBvcnQK',
    session_id: 'run-2026-11-26',
    idempotency_key: 'report-run-2026-11-26',
  },
  tier: 'write',
  destructive: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: {
    filename: z.string().min(1).max(255).describe('Name to store the file under, e.g. report.md.'),
    content: z
      .string()
      .optional()
      .describe('The bytes, base64-encoded (up to 10 MB decoded), e.g. "IyBSZXBvcnQK" for "# Report\\n".'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('Local file path (relative to the server working directory), e.g. out/report.md.'),
    content_type: z.string().min(1).optional().describe('MIME type; default from the extension, e.g. text/markdown.'),
    session_id: sessionId.optional(),
    agent_id: agentId.optional().describe('Producing agent label; default the MCP client name, e.g. "research-bot".'),
    model: z
      .string()
      .min(1)
      .optional()
      .describe('Producing model id, e.g. "claude-sonnet-4"; stored as metadata.model unless set.'),
    metadata: metadataObject.optional(),
    ttl: ttl.optional(),
    transcript: z.boolean().optional().describe('Mark as a session transcript (metadata type=transcript).'),
    idempotency_key: z
      .string()
      .min(1)
      .max(256)
      .regex(/^[\x21-\x7e]+$/, 'must be 1-256 printable ASCII characters without spaces, e.g. a UUID')
      .optional()
      .describe('Pass your own when you may repeat the call, e.g. a UUID or "report-run-42"; 1-256 printable ASCII.'),
  },
  async run(args, ctx): Promise<CallToolResult> {
    if ((args.content === undefined) === (args.path === undefined)) {
      return invalid(
        'store_artifact needs exactly one of `content` (base64) or `path` (local file), e.g. ' +
          '{"filename": "report.md", "content": "IyBSZXBvcnQK"}.',
      );
    }
    const idempotencyKey = args.idempotency_key ?? randomUUID();
    const meta = { idempotency_key: idempotencyKey };
    const metadata: Record<string, unknown> = { ...args.metadata };
    if (args.model !== undefined && metadata.model === undefined) metadata.model = args.model;
    let replayed = false;
    const opts = {
      filename: args.filename,
      contentType: args.content_type,
      sessionId: args.session_id,
      agentId: args.agent_id ?? defaultAgentId(ctx),
      metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
      ttl: args.ttl,
      transcript: args.transcript,
      idempotencyKey,
      onResponse: (info: { replayed: boolean }) => {
        replayed = info.replayed;
      },
    };
    const stored = async (record: ArtifactRecord): Promise<CallToolResult> => {
      if (replayed) return ok(record, { ...meta, replayed: true });
      // Only the caller's own key protects a repeat it did not see answered; without one, say so.
      const twin = args.idempotency_key === undefined ? await earlierCopy(ctx.client, record) : null;
      return ok(record, twin ? { ...meta, possible_duplicate_of: twin } : meta);
    };
    try {
      if (args.content !== undefined) {
        if (!BASE64.test(args.content)) {
          return invalid('`content` must be base64 (A-Z a-z 0-9 + / and = padding), e.g. "IyBSZXBvcnQK".');
        }
        const bytes = Buffer.from(args.content, 'base64');
        if (bytes.length > JSON_UPLOAD_MAX) {
          return fail(
            `content is ${bytes.length} bytes decoded; the limit is 10 MB. Write it to a file and pass \`path\`.`,
            { status: 413, code: 'file_too_large', retry_hint: 'fix_arguments', ...meta },
          );
        }
        return await stored(await ctx.client.uploadBytes(bytes, opts));
      }
      if (!ctx.openLocalFile) {
        return invalid('`path` uploads need the local (stdio) Cairn MCP server; send the bytes as `content`.');
      }
      return await stored(await uploadPath(ctx.openLocalFile, ctx.client, args.path as string, opts));
    } catch (err) {
      return failureFrom(err, { keyHint: ctx.keyHint, meta, args });
    }
  },
});

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
  for (let attempt = 0; ; attempt++) {
    const file = await openLocalFile(filePath);
    try {
      if (file.size > PATH_UPLOAD_MAX) {
        throw new CairnError({
          code: 'file_too_large',
          message: `${filePath} is ${file.size} bytes; the limit is 500 MB. Use request_upload_url (Pro).`,
          status: 413,
        });
      }
      const stream = file.handle.createReadStream({ autoClose: false });
      return await client.uploadStream(stream, { ...opts, size: file.size });
    } catch (err) {
      const wait = attempt < PATH_RETRIES ? retryWaitMs(err, attempt) : null;
      if (wait === null) throw err;
      await sleep(wait);
    } finally {
      await file.handle.close().catch(() => {});
    }
  }
}

/** How long to wait before repeating after `err`, or null when repeating cannot help. */
function retryWaitMs(err: unknown, attempt: number): number | null {
  if (!(err instanceof CairnError)) return null;
  if (err.status === 429) return Math.min(err.retryAfter ?? 1, MAX_RETRY_WAIT_S) * 1000;
  if (err.status === 0 || err.status >= 500) return Math.min(200 * 2 ** attempt, 5_000);
  return null;
}
