import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
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

/** The question put to the user, naming what would happen to what. */
export function confirmationQuestion(tool: string, args: Record<string, unknown>): string {
  switch (tool) {
    case 'create_download_link': {
      const seconds = typeof args.expires_in === 'number' ? args.expires_in : 604_800;
      return (
        `Create a public download link for artifact ${String(args.artifact_id)}? Anyone who has the URL ` +
        `can download the file for ${lifetime(seconds)}.`
      );
    }
    case 'delete_artifact':
      return `Delete artifact ${String(args.artifact_id)}? Its download links and its page stop working at once.`;
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
  tool: string,
  args: Record<string, unknown>,
): Promise<{ refused: CallToolResult; outcome: string } | null> {
  let action: string;
  try {
    const answer = await server.elicitInput(
      { mode: 'form', message: confirmationQuestion(tool, args), requestedSchema: { type: 'object', properties: {} } },
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

function lifetime(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  if (seconds % 60 === 0) return `${seconds / 60} minute${seconds === 60 ? '' : 's'}`;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}
