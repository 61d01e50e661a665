import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { InitializeRequest, InitializeResult } from '@modelcontextprotocol/sdk/types.js';
import { InitializeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { GrantTier } from '../shared/scopes.js';
import { TIER_LABEL, tierCovers } from '../shared/scopes.js';
import type { Tier } from './context.js';
import { TOOLS } from './tools.js';

/**
 * The server's instructions, written for the connection they are sent on: an agent reads them
 * before it sees any tool, so they say which tools are off here, why, and what the user can do
 * about it, instead of leaving the agent to guess at names it cannot see.
 */

/**
 * How destructive tools (create_download_link, revoke_link, delete_artifact, seal_session) are
 * offered on a local connection: `confirm` when the host advertises experimental.confirmations
 * (listed with requiresConfirmation, the host asks), `elicit` when it declares the standard
 * elicitation capability (listed; the server asks the user through elicitation/create before each
 * call), `allowed` with --allow-destructive, otherwise `hidden` (not listed, refused).
 */
export type GatingMode = 'confirm' | 'elicit' | 'allowed' | 'hidden';

const namesOf = (tools: readonly { name: string }[]) => {
  const names = tools.map((t) => t.name);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? '');
};

const DESTRUCTIVE = TOOLS.filter((t) => t.destructive);

function overview(withLinks: boolean): string {
  return (
    'Cairn stores files (artifacts) that must outlive this conversation, with metadata and optional session ' +
    `labels, and shares them with people as web pages${withLinks ? ' or download links' : ''}. Store outputs ` +
    'with store_artifact (pass your own idempotency_key when you may repeat a call), find them with ' +
    'list_artifacts, share only when the user asks. A failed call says what to do next; programs read ' +
    '_meta.code and _meta.retry_hint.'
  );
}

/**
 * The instructions of a local (stdio) connection, once its gating is known; `roots` are the
 * folders `path` uploads may read.
 */
export function localInstructions(mode: GatingMode, roots: readonly string[] = []): string {
  const files =
    roots.length > 0
      ? `store_artifact's path reads files under ${roots.join(', ')} (the user adds folders with --allow-path); ` +
        '.env files, keys and credentials are never read.'
      : "store_artifact's path reads no local folder (the user adds one with --allow-path); send text or content.";
  return `${gating(mode)}\n\n${files}`;
}

function gating(mode: GatingMode): string {
  const names = namesOf(DESTRUCTIVE);
  switch (mode) {
    case 'hidden':
      return (
        `${overview(false)}\n\nOff on this connection, and not listed: ${names}. They share, delete or seal ` +
        'for good; this MCP host did not declare that it can ask the user to confirm such actions (the MCP ' +
        'elicitation capability), and the server was not started with --allow-destructive. To share a file, ' +
        'publish it as a web page with publish_artifact: the page stays up for anyone with its URL until ' +
        'unpublish_artifact takes it down, so tell the user. A page has no expiry, so it cannot meet a ' +
        'time-limited request ("a link for 24 hours"): say so, and do not offer a page instead. When the user ' +
        'wants a download link, a revoked ' +
        'link, a deletion or a sealed session, tell them how to allow it: restart the Cairn MCP server with `cairn mcp ' +
        '--allow-destructive` (a command-line flag: it cannot be turned on from here), or use an MCP host that ' +
        'supports elicitation; or do it themselves with the cairn CLI (`cairn link`, `cairn unlink`, `cairn rm`, ' +
        '`cairn seal`).'
      );
    case 'elicit':
      return (
        `${overview(true)}\n\n${names} ask the user to confirm each call (an elicitation form) before anything ` +
        'happens. If the user declines, nothing is done: do not ask again unless they do.'
      );
    case 'confirm':
      return `${overview(true)}\n\n${names} are marked requiresConfirmation: this host asks the user before each call.`;
    case 'allowed':
      return (
        `${overview(true)}\n\n${names} are on because the user started the server with --allow-destructive. ` +
        'Nobody confirms them: call them only when the user asked for that effect.'
      );
  }
}

/** The instructions of a hosted connection: every tool is listed, those beyond the grant are refused. */
export function hostedInstructions(granted: GrantTier): string {
  const refused = (['write', 'destroy'] as Tier[]).filter((tier) => !tierCovers(granted, tier));
  if (refused.length === 0) {
    return (
      `${overview(true)}\n\nThis connection has every permission (${TIER_LABEL.destroy}): ${namesOf(DESTRUCTIVE)} ` +
      'work without a further question, so call them only when the user asked for that effect.'
    );
  }
  const lines = refused.map((tier) => `${namesOf(TOOLS.filter((t) => t.tier === tier))} need ${TIER_LABEL[tier]}`);
  return (
    `${overview(true)}\n\nThis connection was granted the ${TIER_LABEL[granted]} permission only. Listed but refused here ` +
    `(insufficient_scope): ${lines.join('; ')}. When the user wants one of those, ask them to reconnect ` +
    `Cairn in their MCP client and choose ${refused.map((tier) => TIER_LABEL[tier]).join(' or ')} on the consent ` +
    'screen.'
  );
}

/**
 * Answers `initialize` with instructions made once the client has said what it can do. The SDK
 * takes instructions at construction, before that; its own initialize handling (the protocol
 * version, recording the client's capabilities) still runs first, so `instructions` may read
 * `server.getClientCapabilities()`.
 */
export function instructionsAtInitialize(server: Server, instructions: () => string): void {
  const sdk = server as unknown as { _oninitialize?(request: InitializeRequest): Promise<InitializeResult> };
  if (typeof sdk._oninitialize !== 'function') {
    throw new Error('@modelcontextprotocol/sdk changed its initialize handling: update src/mcp/instructions.ts');
  }
  const initialize = sdk._oninitialize.bind(server);
  server.setRequestHandler(InitializeRequestSchema, async (request) => ({
    ...(await initialize(request)),
    instructions: instructions(),
  }));
}
