import { z } from 'zod';
import { durationSeconds } from '../shared/duration.js';
import { defineTool, sessionId, type ToolDef } from './context.js';
import { ok } from './results.js';

/** The longest a share link lives (the API refuses more). */
const LINK_MAX_SECONDS = 2_592_000;

/** A share link's lifetime arguments, of both link tools. */
export const LINK_LIFETIME = {
  ttl: z
    .string()
    .trim()
    .regex(/^[1-9]\d*[smhd]$/, 'must be a count of s, m, h or d, e.g. "3d", "12h" or "90m" (at most "30d")')
    .optional()
    .describe('Lifetime as a duration, e.g. "3d" or "12h" (at most "30d"). Instead of expires_in.'),
  expires_in: z
    .number()
    .int()
    .min(1)
    .max(LINK_MAX_SECONDS)
    .optional()
    .describe('Lifetime in seconds, 1-2592000, e.g. 259200 for 3 days (default 604800). Instead of ttl.'),
};

export function checkLinkLifetime(args: { ttl?: string; expires_in?: number }): string | null {
  if (args.ttl !== undefined && args.expires_in !== undefined) {
    return 'give the lifetime once: ttl (e.g. "3d") or expires_in (seconds), not both.';
  }
  const seconds = args.ttl === undefined ? null : durationSeconds(args.ttl);
  return seconds !== null && seconds > LINK_MAX_SECONDS
    ? `ttl "${args.ttl}" is longer than a share link may live (30 days: "30d").`
    : null;
}

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/** A whole session in one download: a private archive URL (read), a public session link (destroy). */
export const SESSION_TOOLS: readonly ToolDef[] = [
  defineTool({
    name: 'get_session_archive_url',
    title: 'Private archive URL of a session',
    description: (listed) =>
      "A private URL, valid for one hour, of a whole session's live artifacts as one archive (zip by default, " +
      'or tar.gz), with a manifest.json listing each file with its SHA-256: for fetching a run in one download. ' +
      'Returns the URL, the archive filename, artifact_count and size_bytes. ' +
      (listed('create_session_link')
        ? 'Not for sharing with people: for a link anyone can open use create_session_link (sealed sessions).'
        : 'Not for sharing with people.'),
    example: { session_id: 'run-2026-11-26' },
    tier: 'read',
    destructive: false,
    annotations: READ,
    input: {
      session_id: sessionId,
      format: z.enum(['zip', 'tar.gz']).optional().describe('"zip" (default) or "tar.gz".'),
    },
    run: async (args, ctx) =>
      ok(await ctx.client.getSessionArchiveUrl(args.session_id, args.format ? { format: args.format } : {})),
  }),
  defineTool({
    name: 'create_session_link',
    title: 'Create a public link to a whole session',
    description:
      'Create an unauthenticated link to a SEALED session (seal_session first): `url` opens a page listing the ' +
      "session's files with their sizes and a download-all button, `archive_url` is the archive itself. Lifetime " +
      'as for create_download_link: `ttl` ("3d") or `expires_in` seconds, default 7 days, at most 30. Only when ' +
      'the user asked to share the run; revoke it with revoke_link. Not idempotent: each call makes another live ' +
      'link, counted with the download links (see whoami).',
    example: { session_id: 'run-2026-11-26', ttl: '3d' },
    tier: 'destroy',
    destructive: true,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    verifyOnAmbiguity: 'Ask the user whether a link arrived, or check active_links with whoami before any new call.',
    input: { session_id: sessionId, ...LINK_LIFETIME },
    validate: checkLinkLifetime,
    run: async (args, ctx) =>
      ok(await ctx.client.createSessionLink(args.session_id, { expiresIn: args.expires_in, ttl: args.ttl })),
  }),
];
