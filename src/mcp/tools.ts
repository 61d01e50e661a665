import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CairnError } from 'cairn-store-sdk';
import { nodeCrypto } from 'cairn-store-sdk/internal';
import { z } from 'zod';
import { LINK_ID } from '../shared/id-shapes.js';
import { INLINE_LIMIT_TEXT, LARGE_LIMIT_TEXT, SINGLE_LIMIT_TEXT } from '../shared/upload-limits.js';
import {
  agentId,
  artifactId,
  cursor,
  defineTool,
  idempotencyKey,
  limit,
  metadataObject,
  sessionId,
  type ToolContext,
  type ToolDef,
  timestamp,
  ttl,
} from './context.js';
import { exampleCall, failureFrom, invalid, ok, zodFailure } from './results.js';
import { checkLinkLifetime, LINK_LIFETIME, SESSION_TOOLS } from './session-tools.js';
import { storeArtifact } from './store.js';

/**
 * The one table of Cairn's MCP tools, shared by the stdio server and the hosted server.
 * Read tools are safe to repeat; the SDK client retries 5xx for every idempotent call, and the
 * non-idempotent create_download_link gets exactly one attempt; store_artifact and request_upload_url
 * send an Idempotency-Key (the caller's or a fresh UUID), which makes their repeats safe.
 */

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITE_IDEMPOTENT = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const TOOLS: readonly ToolDef[] = [
  defineTool({
    name: 'whoami',
    title: 'Account and usage',
    description:
      'Check which Cairn account the API key belongs to, its plan, storage and request usage against the ' +
      'plan limits, active download links and rate limits. Use it to verify the connection or before a ' +
      'large upload to see whether it fits.',
    example: {},
    tier: 'read',
    destructive: false,
    annotations: READ,
    input: {},
    run: async (_args, ctx) => ok(await ctx.client.whoami()),
  }),
  defineTool({
    name: 'list_artifacts',
    title: 'List artifacts',
    description:
      'Find stored artifacts, newest first. Filter by session_id, agent_id, filename, content_type, a ' +
      'created_after/created_before window, up to 8 metadata key-value pairs that must all match (e.g. ' +
      '{"model": "gpt-5", "type": "report"}), or ' +
      'transcript: true for session transcripts. Pages of `limit` (default 50, max 200); pass next_cursor ' +
      'as `cursor` for more. Returns records only, never file contents (use the cairn://artifact/{id}/bytes ' +
      'resource or get_artifact_download_url for bytes).',
    example: { session_id: 'run-2026-11-26', metadata: { type: 'report' }, limit: 20 },
    tier: 'read',
    destructive: false,
    annotations: READ,
    input: {
      session_id: sessionId.optional(),
      agent_id: agentId.optional(),
      filename: z.string().min(1).optional().describe('Exact filename, e.g. report.md.'),
      content_type: z.string().min(1).optional().describe('Exact MIME type, e.g. text/markdown.'),
      created_after: timestamp('after').optional(),
      created_before: timestamp('before').optional(),
      metadata: z
        .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
        .refine((m) => Object.keys(m).length <= 8, 'at most 8 key-value pairs')
        .optional()
        .describe('Exact metadata matches, all of which must hold (up to 8), e.g. {"type": "report"}.'),
      transcript: z.boolean().optional().describe('true: only session transcripts.'),
      limit: limit.optional(),
      cursor: cursor.optional(),
    },
    run: async (args, ctx) => {
      const metadata = args.metadata
        ? Object.fromEntries(Object.entries(args.metadata).map(([k, v]) => [k, String(v)]))
        : undefined;
      return ok(
        await ctx.client.listArtifacts({
          sessionId: args.session_id,
          agentId: args.agent_id,
          filename: args.filename,
          contentType: args.content_type,
          createdAfter: args.created_after,
          createdBefore: args.created_before,
          metadata,
          transcript: args.transcript,
          limit: args.limit,
          cursor: args.cursor,
        }),
      );
    },
  }),
  defineTool({
    name: 'get_artifact',
    title: 'Get an artifact',
    description:
      "Fetch one artifact's record: filename, type, size, SHA-256, metadata, session, expiry, and its public " +
      'page (page.public_url) if published. Use it to check an artifact still exists before sharing it.',
    example: { artifact_id: 'art_3fK9xQ2LmN8pR4tV' },
    tier: 'read',
    destructive: false,
    annotations: READ,
    input: { artifact_id: artifactId },
    run: async (args, ctx) => ok(await ctx.client.getArtifact(args.artifact_id)),
  }),
  defineTool({
    name: 'get_artifact_download_urls',
    title: 'Private download URLs (batch)',
    description: (listed) =>
      'Presigned URLs for up to 20 artifacts in one call, one item per id in the order given, each a bearer ' +
      'URL: anyone who holds it can download that file for one hour, and it cannot be revoked. An id that is ' +
      'unknown, deleted or expired gets an item with `error` instead of a URL. Meant for fetching bytes ' +
      'yourself; ' +
      (listed('create_download_link')
        ? 'to share with people use create_download_link (a lifetime you choose, revocable).'
        : 'to share with people publish a web page with publish_artifact.'),
    example: { artifact_ids: ['art_3fK9xQ2LmN8pR4tV', 'art_9LmN2xQ8pR4tV3fK'] },
    tier: 'read',
    destructive: false,
    annotations: READ,
    input: {
      artifact_ids: z.array(artifactId).min(1).max(20).describe('1 to 20 artifact ids, e.g. ["art_3fK9xQ2LmN8pR4tV"].'),
    },
    run: async (args, ctx) => ok(await ctx.client.downloadUrls(args.artifact_ids)),
  }),
  defineTool({
    name: 'get_artifact_download_url',
    title: 'Private download URL',
    description: (listed) =>
      "A presigned URL to fetch an artifact's bytes yourself, valid for one hour. It is a bearer URL: anyone " +
      'who holds it can download the file until it expires, and it cannot be revoked, so do not paste it where ' +
      'others see it. ' +
      (listed('create_download_link')
        ? 'To share with people use create_download_link (a lifetime you choose, revocable) or publish_artifact (a web page).'
        : 'To share a file with people, publish it as a web page with publish_artifact.'),
    example: { artifact_id: 'art_3fK9xQ2LmN8pR4tV' },
    tier: 'read',
    destructive: false,
    annotations: READ,
    input: { artifact_id: artifactId },
    run: async (args, ctx) => ok(await ctx.client.getDownloadUrl(args.artifact_id)),
  }),
  defineTool({
    name: 'list_sessions',
    title: 'List sessions',
    description:
      'List session labels with their artifact counts, first/last artifact times and is_sealed, most recently ' +
      'active first. Pages of `limit` (default 50, max 200); pass next_cursor as `cursor` for more. Use it to ' +
      'find earlier work or to check whether a session is sealed before storing into it.',
    example: { created_after: '2026-11-01T00:00:00Z', limit: 20 },
    tier: 'read',
    destructive: false,
    annotations: READ,
    input: {
      created_after: timestamp('after').optional(),
      created_before: timestamp('before').optional(),
      limit: limit.optional(),
      cursor: cursor.optional(),
    },
    run: async (args, ctx) =>
      ok(
        await ctx.client.listSessions({
          createdAfter: args.created_after,
          createdBefore: args.created_before,
          limit: args.limit,
          cursor: args.cursor,
        }),
      ),
  }),
  storeArtifact,
  defineTool({
    name: 'request_upload_url',
    title: 'Presigned upload (large files)',
    description: (_listed, where) =>
      `Pro plan only: reserve an artifact and get a URL to PUT a large file (up to ${LARGE_LIMIT_TEXT}) directly, ` +
      'then call complete_upload. Use only for files too large for store_artifact (over ' +
      `${where === 'local' ? SINGLE_LIMIT_TEXT : INLINE_LIMIT_TEXT}). The reservation is held 24 hours; get_artifact ` +
      'shows it as status "pending" with held_until. Each call reserves a new artifact unless it repeats an ' +
      'idempotency_key: pass your own when you may repeat the call (a fresh UUID per file), or use the one ' +
      'returned in _meta.idempotency_key; a repeat with it returns the same reservation with a fresh URL.',
    example: {
      filename: 'dataset.parquet',
      size_bytes: 2_000_000_000,
      session_id: 'run-2026-11-26',
      idempotency_key: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
    },
    tier: 'write',
    destructive: false,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    input: {
      filename: z.string().min(1).max(255).describe('Name to store the file under, e.g. dataset.parquet.'),
      size_bytes: z
        .number()
        .int()
        .min(1)
        .max(5 * 1024 ** 3)
        .describe(`Exact size in bytes, at most ${LARGE_LIMIT_TEXT}, e.g. 2000000000.`),
      content_type: z.string().min(1).optional().describe('MIME type, e.g. application/octet-stream.'),
      session_id: sessionId.optional(),
      agent_id: agentId.optional(),
      metadata: metadataObject.optional(),
      ttl: ttl.optional(),
      idempotency_key: idempotencyKey
        .optional()
        .describe(
          'A repeat with the same key returns the same reservation, e.g. a fresh UUID per file; default a new UUID (in _meta).',
        ),
    },
    run: async (args, ctx) => {
      // The same automatic key as store_artifact: the SDK then retries a failed attempt safely.
      const key = args.idempotency_key ?? nodeCrypto().randomUUID();
      let replayed = false;
      try {
        const ticket = await ctx.client.requestUploadUrl({
          filename: args.filename,
          sizeBytes: args.size_bytes,
          contentType: args.content_type,
          sessionId: args.session_id,
          agentId: args.agent_id,
          metadata: args.metadata,
          ttl: args.ttl,
          idempotencyKey: key,
          onResponse: (info) => {
            replayed = info.replayed;
          },
        });
        return ok(ticket, replayed ? { idempotency_key: key, replayed: true } : { idempotency_key: key });
      } catch (err) {
        // The key is the way to a safe repeat: every failure carries it, as store_artifact's do.
        return failureFrom(err, { keyHint: ctx.keyHint, meta: { idempotency_key: key }, args });
      }
    },
  }),
  defineTool({
    name: 'complete_upload',
    title: 'Finish a presigned upload',
    description:
      'Finalize an artifact reserved by request_upload_url after its bytes were PUT to the upload URL. ' +
      'Idempotent: calling it again returns the same record.',
    example: { artifact_id: 'art_3fK9xQ2LmN8pR4tV' },
    tier: 'write',
    destructive: false,
    annotations: WRITE_IDEMPOTENT,
    input: { artifact_id: artifactId },
    run: async (args, ctx) => ok(await ctx.client.completeUpload(args.artifact_id)),
  }),
  defineTool({
    name: 'create_download_link',
    title: 'Create a public download link',
    description:
      'Create an unauthenticated download URL that anyone holding it can use, to share a file with people. ' +
      'Lifetime: `ttl` as a duration ("3d", "12h", "90m") or `expires_in` seconds (e.g. 259200), not both; ' +
      'default 7 days, at most 30 days ("30d"). Only when the user asked to share; for a viewable web page use ' +
      'publish_artifact, for your own access get_artifact_download_url. Not idempotent: each call makes another ' +
      'live link (free plan: 100 live links at a time, see whoami).',
    example: { artifact_id: 'art_3fK9xQ2LmN8pR4tV', ttl: '3d' },
    tier: 'destroy',
    destructive: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    verifyOnAmbiguity: 'Ask the user whether a link arrived, or check active_links with whoami before any new call.',
    input: { artifact_id: artifactId, ...LINK_LIFETIME },
    validate: checkLinkLifetime,
    run: async (args, ctx) =>
      ok(await ctx.client.createLink(args.artifact_id, { expiresIn: args.expires_in, ttl: args.ttl })),
  }),
  ...SESSION_TOOLS,
  defineTool({
    name: 'list_links',
    title: "List an artifact's share links",
    description: (listed) =>
      'List the live (unexpired, unrevoked) download links of one artifact, newest first: link_id, url, ' +
      'created_at, expires_at. Pages of `limit` (default 50, max 200); pass next_cursor as `cursor` for more. ' +
      (listed('revoke_link')
        ? 'Use it to find the link_id to revoke_link, or to see who could still download a file.'
        : 'Use it to see who could still download a file.'),
    example: { artifact_id: 'art_3fK9xQ2LmN8pR4tV' },
    tier: 'read',
    destructive: false,
    annotations: READ,
    input: { artifact_id: artifactId, limit: limit.optional(), cursor: cursor.optional() },
    run: async (args, ctx) =>
      ok(await ctx.client.listLinks(args.artifact_id, { limit: args.limit, cursor: args.cursor })),
  }),
  defineTool({
    name: 'revoke_link',
    title: 'Revoke a share link',
    description:
      'Revoke one download link (lnk_…): its URL stops working at once for everyone who has it; the artifact ' +
      'and its other links stay. Only when the user asked for it. Idempotent: revoking again answers the same; ' +
      'a link_id that is not this account’s (or is gone with its expiry or its artifact) is artifact_not_found.',
    example: { link_id: 'lnk_8Hq2ZpX4mR7tK1vN3bYc' },
    tier: 'destroy',
    destructive: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: {
      link_id: z
        .string()
        .regex(LINK_ID, 'is not a link id: lnk_ and 20 letters or digits, e.g. lnk_8Hq2ZpX4mR7tK1vN3bYc')
        .describe('Link id: lnk_ followed by 20 letters or digits, e.g. lnk_8Hq2ZpX4mR7tK1vN3bYc (from list_links).'),
    },
    run: async (args, ctx) => ok(await ctx.client.revokeLink(args.link_id)),
  }),
  defineTool({
    name: 'delete_artifact',
    title: 'Delete an artifact',
    description:
      'Soft-delete an artifact: it disappears from lists, downloads, links and its page at once (removed for ' +
      'good after 30 days). Only when the user asked for it; requires confirm: true. Repeating it is harmless ' +
      '(already_deleted: true).',
    example: { artifact_id: 'art_3fK9xQ2LmN8pR4tV', confirm: true },
    tier: 'destroy',
    destructive: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: {
      artifact_id: artifactId,
      confirm: z
        .literal(true, {
          errorMap: () => ({ message: 'must be true: confirm the deletion (after the user agreed to it)' }),
        })
        .describe('Must be true: the user agreed to the deletion.'),
    },
    run: async (args, ctx) => {
      try {
        return ok(await ctx.client.deleteArtifact(args.artifact_id));
      } catch (err) {
        if (err instanceof CairnError && err.code === 'artifact_already_deleted') {
          return ok({ artifact_id: args.artifact_id, deleted: true, already_deleted: true });
        }
        throw err;
      }
    },
  }),
  defineTool({
    name: 'seal_session',
    title: 'Seal a session',
    description:
      'Seal a session: from now on no artifact can be stored with its session_id (store_artifact and ' +
      "request_upload_url answer session_sealed). It changes nothing else: the session's artifacts stay readable, " +
      'shareable and publishable, and can still be deleted one by one. Irreversible (there is no unseal); use it ' +
      'only when the user says the work in that session is final.',
    example: { session_id: 'run-2026-11-26' },
    tier: 'destroy',
    destructive: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    input: { session_id: sessionId },
    run: async (args, ctx) => ok(await ctx.client.sealSession(args.session_id)),
  }),
  defineTool({
    name: 'publish_artifact',
    title: 'Publish as a web page',
    description: (listed) =>
      'Give an artifact a web page anyone with the URL can view (HTML sandboxed, Markdown rendered, images ' +
      'shown, other types as a download card), with a provenance receipt. Returns public_url. Visibility ' +
      'defaults to unlisted; access "password" (Pro) needs `password` and is not available for HTML artifacts ' +
      '(text/html, XHTML; no argument changes that): for those publish without a password, ' +
      (listed('create_download_link') ? 'share a download link (create_download_link), ' : '') +
      'or store the content in another format (Markdown, PDF) and publish that. A page has no expiry: it stays ' +
      'up until unpublish_artifact. Idempotent: publishing again updates title/visibility/access and keeps the ' +
      'same URL.',
    example: { artifact_id: 'art_3fK9xQ2LmN8pR4tV', title: 'Weekly report', visibility: 'unlisted' },
    tier: 'write',
    destructive: false,
    annotations: { ...WRITE_IDEMPOTENT, openWorldHint: true },
    input: {
      artifact_id: artifactId,
      title: z.string().min(1).max(200).optional().describe('Shown in the page header, e.g. "Weekly report".'),
      visibility: z.enum(['unlisted', 'public']).optional().describe('Default unlisted.'),
      access: z
        .enum(['none', 'password'])
        .optional()
        .describe('Default none; password is Pro only and not for HTML artifacts.'),
      password: z
        .string()
        .min(1)
        .optional()
        .describe('Required with access "password": the one the user chose (never invent one).'),
    },
    run: async (args, ctx) =>
      ok(
        await ctx.client.publish(args.artifact_id, {
          title: args.title,
          visibility: args.visibility,
          access: args.access,
          password: args.password,
        }),
      ),
  }),
  defineTool({
    name: 'unpublish_artifact',
    title: 'Take a page down',
    description:
      "Take an artifact's public page down at once: its URL stops working for everyone who has it. The artifact " +
      'itself is kept, and publish_artifact again restores the same URL. Accepts the artifact id (art_…) or page ' +
      'id (pg_…). Idempotent. Only when the user asked for it.',
    example: { artifact_id: 'art_3fK9xQ2LmN8pR4tV' },
    tier: 'write',
    destructive: false,
    // Destructive: a live page stops answering for everyone who has its URL (idempotent, and undone by publishing again).
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    input: {
      artifact_id: z
        .string()
        .regex(
          /^(?:art|pg)_[A-Za-z0-9]{16}$/,
          'is neither an artifact id (art_ + 16 letters or digits) nor a page id (pg_ + 16), e.g. art_3fK9xQ2LmN8pR4tV',
        )
        .describe('Artifact id or page id: art_ or pg_ followed by 16 letters or digits, e.g. art_3fK9xQ2LmN8pR4tV.'),
    },
    run: async (args, ctx) => ok(await ctx.client.unpublish(args.artifact_id)),
  }),
];

export const TOOLS_BY_NAME: ReadonlyMap<string, ToolDef> = new Map(TOOLS.map((t) => [t.name, t]));

/**
 * Validates the arguments and runs the tool; every failure becomes an isError result. `confirm`,
 * given valid arguments, may return a result to give instead of running (the user said no).
 */
export async function runTool(
  tool: ToolDef,
  rawArgs: unknown,
  ctx: ToolContext,
  confirm?: (args: Record<string, unknown>) => Promise<CallToolResult | null>,
): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(rawArgs ?? {});
  if (!parsed.success) return zodFailure(tool, parsed.error);
  const wrong = tool.validate?.(parsed.data);
  if (wrong) return invalid(`Invalid arguments for ${tool.name}: ${wrong} ${exampleCall(tool)}`);
  const refused = confirm ? await confirm(parsed.data) : null;
  if (refused) return refused;
  try {
    return await tool.run(parsed.data, ctx);
  } catch (err) {
    return failureFrom(err, {
      keyHint: ctx.keyHint,
      ambiguous: tool.verifyOnAmbiguity ? { verify: tool.verifyOnAmbiguity } : undefined,
      args: parsed.data,
    });
  }
}
