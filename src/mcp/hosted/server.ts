import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { GrantTier } from '../../ports/account-store.js';
import { isCairnError } from '../../shared/cairn-error.js';
import { SCOPE_OF, TIER_LABEL, tierCovers } from '../../shared/scopes.js';
import type { CairnApi, ToolContext, ToolDef } from '../context.js';
import { hostedInstructions } from '../instructions.js';
import { listResources, RESOURCE_TEMPLATES, readResource } from '../resources.js';
import { fail } from '../results.js';
import { MCP_SERVER_VERSION, toolListing } from '../server.js';
import { runTool, TOOLS, TOOLS_BY_NAME } from '../tools.js';

export interface HostedServerOptions {
  client: CairnApi;
  /** What the connection may do: an OAuth grant's tier, or `destroy` for a raw API key. */
  tier: GrantTier;
  /** The name to record as agent_id by default (the OAuth client's registered name), when known. */
  clientName?: string;
  /**
   * The request's MCP session (a client that sent `Mcp-Session-Id`): where `resources/subscribe`
   * records what the session's GET stream reports. Absent, subscribing is refused.
   */
  subscriptions?: {
    subscribe(uri: string): Promise<void>;
    unsubscribe(uri: string): Promise<void>;
  };
}

/**
 * The refusal of a tool outside the grant: a tool error the agent can read and relay, naming the
 * scope it needs. (Not an HTTP 403 challenge: see docs/mcp.md, "Permissions".)
 */
export function insufficientScope(tool: ToolDef, granted: GrantTier): CallToolResult {
  const need = TIER_LABEL[tool.tier];
  return fail(
    `insufficient_scope: ${tool.name} needs the ${need} permission (scope ${SCOPE_OF[tool.tier]}), but this ` +
      `connection was granted ${TIER_LABEL[granted]} (${SCOPE_OF[granted]}). Ask the user to reconnect Cairn in ` +
      `their MCP client (authorize again) and choose ${need} on the consent screen.`,
    {
      status: 403,
      code: 'insufficient_scope',
      retry_hint: 'do_not_retry',
      required_scope: SCOPE_OF[tool.tier],
      granted_scope: SCOPE_OF[granted],
    },
  );
}

/**
 * A Cairn MCP server for ONE hosted HTTP request (stateless: never shared between requests or
 * clients). Every tool is listed; calls are checked against the tier. The local
 * --allow-destructive gating does not apply here: the consent screen decided.
 */
export function createHostedServer(opts: HostedServerOptions): Server {
  const server = new Server(
    { name: 'cairn', title: 'Cairn', version: MCP_SERVER_VERSION },
    { capabilities: { tools: {}, resources: { subscribe: true } }, instructions: hostedInstructions(opts.tier) },
  );
  const context = (): ToolContext => {
    // Stateless: clientInfo only arrives with `initialize`; later requests use the OAuth client's name.
    const info = server.getClientVersion();
    const name = info?.name ?? opts.clientName;
    return { client: opts.client, clientInfo: name ? { name, version: info?.version } : undefined };
  };

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: TOOLS.map((t) => toolListing(t, 'allowed', () => true, 'hosted')),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = TOOLS_BY_NAME.get(req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${req.params.name}`);
    if (!tierCovers(opts.tier, tool.tier)) return insufficientScope(tool, opts.tier);
    return runTool(tool, req.params.arguments, context());
  });
  // Resources are all in the Read tier, which every connection has.
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await listResources(context()) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(req.params.uri, context()));
  // Subscriptions belong to a session (kept where every instance sees them); its GET stream
  // sends the notifications. A request without a session has nowhere to hear them.
  const subscriptions = () => {
    if (opts.subscriptions) return opts.subscriptions;
    throw new McpError(
      ErrorCode.InvalidRequest,
      'resources/subscribe needs an MCP session: send initialize without Mcp-Session-Id, then send the Mcp-Session-Id ' +
        'it answers with on every request, and open GET /mcp with it to receive notifications/resources/updated.',
    );
  };
  const asMcpError = (err: unknown): never => {
    // The session's refusals (an unknown URI, too many, the session ended) as the client's error.
    if (isCairnError(err)) throw new McpError(ErrorCode.InvalidParams, err.message);
    throw err;
  };
  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    await subscriptions().subscribe(req.params.uri).catch(asMcpError);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    await subscriptions().unsubscribe(req.params.uri).catch(asMcpError);
    return {};
  });
  return server;
}
