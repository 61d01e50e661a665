import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CairnError } from 'cairn-store-sdk';
import { durationSeconds } from '../shared/duration.js';
import { ARTIFACT_ID, LABEL, LINK_ID } from '../shared/id-shapes.js';
import type { CairnApi } from './context.js';
import { fail } from './results.js';

/**
 * Confirmation of a destructive call through the protocol's standard elicitation (a form with
 * no fields: the host shows the question with accept, decline and cancel). Hosts that declare
 * the `elicitation` capability (form mode; the SDK reads an empty `{}` as form) can confirm this
 * way, so they are offered the destructive tools without --allow-destructive.
 */

/** How long the user has to answer before the call is given up (nothing is done then). */
const ANSWER_TIMEOUT_MS = 10 * 60_000;

export function canElicit(server: Server): boolean {
  return server.getClientCapabilities()?.elicitation?.form !== undefined;
}

/**
 * The question put to the user, naming what would happen to what: the file by its name when the
 * server could look it up (`filename`), the link's lifetime as it will be.
 */
export function confirmationQuestion(tool: string, args: Record<string, unknown>, filename?: string): string {
  const id = String(args.artifact_id);
  const file = filename === undefined ? `artifact ${id}` : `${JSON.stringify(filename)} (${id})`;
  switch (tool) {
    case 'create_download_link': {
      const fromTtl = typeof args.ttl === 'string' ? durationSeconds(args.ttl) : null;
      const seconds = fromTtl ?? (typeof args.expires_in === 'number' ? args.expires_in : 604_800);
      return (
        `Create a public download link for ${file}? Anyone who has the URL can download the file for ` +
        `${lifetime(seconds)}.`
      );
    }
    case 'create_session_link': {
      const fromTtl = typeof args.ttl === 'string' ? durationSeconds(args.ttl) : null;
      const seconds = fromTtl ?? (typeof args.expires_in === 'number' ? args.expires_in : 604_800);
      return (
        `Create a public link to session ${String(args.session_id)}? Anyone who has the URL can download all of ` +
        `its files for ${lifetime(seconds)}.`
      );
    }
    case 'delete_artifact':
      return `Delete ${file}? Its download links and its page stop working at once.`;
    case 'revoke_link':
      return `Revoke share link ${String(args.link_id)}? Everyone who has its URL loses access at once; the file stays.`;
    case 'seal_session':
      return `Seal session ${String(args.session_id)}? No more files can be stored in it. This cannot be undone.`;
    default:
      return `Run ${tool}?`;
  }
}

/**
 * Asks the user; null when they accepted, else the result to return instead (nothing was run).
 * The answer decides alone: accept runs the tool, decline and cancel (or no answer) run nothing.
 */
export async function askToConfirm(
  server: Server,
  client: Pick<CairnApi, 'getArtifact'>,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ refused: CallToolResult; outcome: string } | null> {
  const subject = await lookUp(client, args);
  // Gone or never there: the call can change nothing, and its own answer says so; no question.
  if (subject === 'gone') return null;
  const filename = subject?.filename;
  let action: string;
  try {
    const answer = await server.elicitInput(
      {
        mode: 'form',
        message: confirmationQuestion(tool, args, filename),
        requestedSchema: { type: 'object', properties: {} },
      },
      { timeout: ANSWER_TIMEOUT_MS },
    );
    action = answer.action;
  } catch (err) {
    return {
      outcome: 'unconfirmed',
      refused: fail(
        `${tool} was not run: asking the user to confirm it failed (${(err as Error).message}). Nothing was changed.`,
        { status: 403, code: 'confirmation_failed', retry_hint: 'do_not_retry' },
      ),
    };
  }
  if (action === 'accept') return null;
  const declined = action === 'decline';
  return {
    outcome: declined ? 'declined' : 'cancelled',
    refused: fail(
      declined
        ? `${tool} was not run: the user declined it. Nothing was changed; do not ask again unless the user asks for it.`
        : `${tool} was not run: the user dismissed the confirmation without answering. Nothing was changed.`,
      {
        status: 403,
        code: declined ? 'declined_by_user' : 'cancelled_by_user',
        retry_hint: 'do_not_retry',
      },
    ),
  };
}

/**
 * The artifact a call names, so the question can name the file, or `gone` when the API answers
 * it is unknown, deleted or expired; null when there is no artifact or the lookup failed
 * otherwise (the user is then asked without the name).
 */
async function lookUp(
  client: Pick<CairnApi, 'getArtifact'>,
  args: Record<string, unknown>,
): Promise<{ filename: string } | 'gone' | null> {
  if (typeof args.artifact_id !== 'string') return null;
  try {
    return { filename: (await client.getArtifact(args.artifact_id)).filename };
  } catch (err) {
    return err instanceof CairnError && (err.status === 404 || err.status === 410) ? 'gone' : null;
  }
}

function lifetime(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  if (seconds % 60 === 0) return `${seconds / 60} minute${seconds === 60 ? '' : 's'}`;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}

const SHELL_SAFE: Record<string, RegExp> = {
  artifact_id: ARTIFACT_ID,
  link_id: LINK_ID,
  session_id: LABEL,
  ttl: /^[1-9]\d{0,5}[smhd]$/,
};

/**
 * What the user can run instead, for a tool this connection leaves off (`cairn` CLI commands). The
 * arguments were not validated (the call was refused first), so only values of the expected shape
 * go into a command someone may paste into a shell; anything else stays a placeholder.
 */
function cliInstead(tool: string, args: Record<string, unknown>): string {
  const id = (key: string, placeholder: string) => {
    const value = args[key];
    return typeof value === 'string' && SHELL_SAFE[key]?.test(value) ? value : placeholder;
  };
  switch (tool) {
    case 'create_download_link': {
      const ttl = id('ttl', '');
      return `cairn link ${id('artifact_id', 'ART_ID')}${ttl === '' ? '' : ` --expires ${ttl}`}`;
    }
    case 'create_session_link': {
      const ttl = id('ttl', '');
      return `cairn link --session ${id('session_id', 'SESSION')}${ttl === '' ? '' : ` --expires ${ttl}`}`;
    }
    case 'revoke_link':
      return `cairn unlink ${id('link_id', 'LINK_ID')}`;
    case 'delete_artifact':
      return `cairn rm ${id('artifact_id', 'ART_ID')}`;
    case 'seal_session':
      return `cairn seal ${id('session_id', 'SESSION')}`;
    default:
      return 'the cairn CLI';
  }
}

/**
 * The answer to a call of a destructive tool this connection does not list (no confirmation
 * possible, no --allow-destructive): what is off, why, and what the user can do. It names no
 * tool the client cannot see.
 */
export function hiddenToolRefusal(tool: string, args: Record<string, unknown>): CallToolResult {
  const meanwhile =
    tool === 'create_download_link'
      ? ' To share the file meanwhile, publish_artifact makes a web page (it stays up until unpublished).'
      : '';
  return fail(
    'This tool is off on this connection: this MCP host did not declare that it can ask the user to confirm ' +
      'it (the MCP elicitation capability), and the server was not started with --allow-destructive. Nothing ' +
      'was changed. Tell the user: they can run it themselves (`' +
      cliInstead(tool, args) +
      '`), restart the Cairn MCP server with `cairn mcp --allow-destructive` (command line only), or use a ' +
      `host that supports elicitation.${meanwhile}`,
    { status: 403, code: 'destructive_tools_disabled', retry_hint: 'do_not_retry' },
  );
}
