import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CairnError, type UploadStreamOptions } from '../client/index.js';
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
    'recommended). Every call creates a new artifact; an idempotency key is generated unless you pass one and ' +
    'is returned in _meta.idempotency_key: repeat a failed call with the same key to avoid a duplicate. ' +
    'For files over 500 MB use request_upload_url.',
  tier: 'write',
  destructive: false,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  input: {
    filename: z.string().min(1).max(255).describe('Name to store the file under, e.g. report.md.'),
    content: z.string().optional().describe('The bytes, base64-encoded (up to 10 MB decoded).'),
    path: z.string().min(1).optional().describe('Local file path (relative to the server working directory).'),
    content_type: z.string().min(1).optional().describe('MIME type; default from the extension.'),
    session_id: sessionId.optional().describe('Session label grouping related artifacts.'),
    agent_id: agentId.optional().describe('Producing agent label; default the MCP client name.'),
    model: z.string().min(1).optional().describe('Producing model id; stored as metadata.model unless set.'),
    metadata: metadataObject.optional(),
    ttl: ttl.optional(),
    transcript: z.boolean().optional().describe('Mark as a session transcript (metadata type=transcript).'),
    idempotency_key: z.string().min(1).max(256).optional().describe('Reuse to repeat a call safely.'),
  },
  async run(args, ctx): Promise<CallToolResult> {
    if ((args.content === undefined) === (args.path === undefined)) {
      return invalid('store_artifact needs exactly one of `content` (base64) or `path` (local file).');
    }
    const idempotencyKey = args.idempotency_key ?? randomUUID();
    const meta = { idempotency_key: idempotencyKey };
    const metadata: Record<string, unknown> = { ...args.metadata };
    if (args.model !== undefined && metadata.model === undefined) metadata.model = args.model;
    const opts = {
      filename: args.filename,
      contentType: args.content_type,
      sessionId: args.session_id,
      agentId: args.agent_id ?? defaultAgentId(ctx),
      metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
      ttl: args.ttl,
      transcript: args.transcript,
      idempotencyKey,
    };
    try {
      if (args.content !== undefined) {
        if (!BASE64.test(args.content)) return invalid('`content` must be base64 (A-Z a-z 0-9 + / and = padding).');
        const bytes = Buffer.from(args.content, 'base64');
        if (bytes.length > JSON_UPLOAD_MAX) {
          return fail(
            `content is ${bytes.length} bytes decoded; the limit is 10 MB. Write it to a file and pass \`path\`.`,
            { status: 413, code: 'file_too_large', retry_hint: 'fix_arguments', ...meta },
          );
        }
        return ok(await ctx.client.uploadBytes(bytes, opts), meta);
      }
      if (!ctx.openLocalFile) {
        return invalid('`path` uploads need the local (stdio) Cairn MCP server; send the bytes as `content`.');
      }
      return await uploadPath(ctx.openLocalFile, ctx.client, args.path as string, opts, meta);
    } catch (err) {
      return failureFrom(err, { keyHint: ctx.keyHint, meta });
    }
  },
});

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
  opts: UploadStreamOptions,
  meta: Record<string, unknown>,
): Promise<CallToolResult> {
  for (let attempt = 0; ; attempt++) {
    const file = await openLocalFile(filePath);
    try {
      if (file.size > PATH_UPLOAD_MAX) {
        return fail(`${filePath} is ${file.size} bytes; the limit is 500 MB. Use request_upload_url (Pro).`, {
          status: 413,
          code: 'file_too_large',
          retry_hint: 'fix_arguments',
          ...meta,
        });
      }
      const stream = file.handle.createReadStream({ autoClose: false });
      return ok(await client.uploadStream(stream, { ...opts, size: file.size }), meta);
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
