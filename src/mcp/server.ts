import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { CairnApi, ToolContext, ToolDef, Where } from './context.js';
import { askToConfirm, canElicit, hiddenToolRefusal } from './elicit-confirm.js';
import { type GatingMode, instructionsAtInitialize, localInstructions } from './instructions.js';
import type { OpenedFile } from './paths.js';
import { portableSchema } from './portable-schema.js';
import { listResources, RESOURCE_TEMPLATES, readResource } from './resources.js';
import { type EventFollower, installSubscriptions } from './subscriptions.js';
import { runTool, TOOLS, TOOLS_BY_NAME } from './tools.js';

/** The MCP surface's own version line (spec: stable at 1.x, no breaking change without v2). */
export const MCP_SERVER_VERSION = '1.1.0';

export interface LocalServerOptions {
  client: CairnApi;
  keyHint?: string;
  openLocalFile?: (path: string) => Promise<OpenedFile>;
  /** From the command line only, never from the environment or a config file. */
  allowDestructive: boolean;
  /** One line per destructive call (stderr on stdio). */
  audit: (line: string) => void;
  /** The folders `path` uploads may read, named in the instructions. */
  pathRoots?: readonly string[];
  /** Follows the change feed for `resources/subscribe` (absent: no subscriptions). */
  events?: EventFollower;
}

/** A tool as `tools/list` shows it (shared with the hosted server). */
export function toolListing(
  tool: ToolDef,
  mode: GatingMode,
  listed: (name: string) => boolean = () => true,
  where: Where = 'local',
): Tool {
  const input = where === 'hosted' && tool.localArgs ? tool.input.omit(mask(tool.localArgs)) : tool.input;
  const entry: Tool = {
    name: tool.name,
    title: tool.title,
    description: typeof tool.description === 'string' ? tool.description : tool.description(listed, where),
    inputSchema: portableSchema(
      toJsonSchemaCompat(input, { strictUnions: true, pipeStrategy: 'input' }) as Record<string, unknown>,
    ) as Tool['inputSchema'],
    annotations: { title: tool.title, ...tool.annotations },
    _meta: { 'cairn/tier': tool.tier },
  };
  if (tool.destructive && mode === 'confirm') {
    // Not (yet) a standard annotation: hosts that advertise confirmations read either place.
    entry.annotations = { ...entry.annotations, requiresConfirmation: true } as Tool['annotations'];
    entry._meta = { ...entry._meta, requiresConfirmation: true };
  }
  return entry;
}

const mask = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, true as const]));

/** The subject of a destructive call, for the audit line (ids only, never secrets). */
function subject(args: unknown): Record<string, unknown> {
  const a = (args ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of ['artifact_id', 'link_id', 'session_id', 'ttl', 'expires_in']) if (a[k] !== undefined) out[k] = a[k];
  return out;
}

/** A Cairn MCP server for one local connection (the transport is connected by the caller). */
export function createLocalServer(opts: LocalServerOptions): Server {
  const server = new Server(
    { name: 'cairn', title: 'Cairn', version: MCP_SERVER_VERSION },
    {
      capabilities: { tools: {}, resources: opts.events ? { subscribe: true } : {} },
      instructions: localInstructions('hidden', opts.pathRoots),
    },
  );

  const mode = (): GatingMode => {
    const experimental = server.getClientCapabilities()?.experimental as Record<string, unknown> | undefined;
    if (experimental?.confirmations) return 'confirm';
    // A host that can ask its user is asked, even with --allow-destructive (meant for hosts that cannot).
    if (canElicit(server)) return 'elicit';
    return opts.allowDestructive ? 'allowed' : 'hidden';
  };
  instructionsAtInitialize(server, () => localInstructions(mode(), opts.pathRoots));

  const context = (): ToolContext => {
    const info = server.getClientVersion();
    return {
      client: opts.client,
      keyHint: opts.keyHint,
      openLocalFile: opts.openLocalFile,
      clientInfo: info ? { name: info.name, version: info.version } : undefined,
    };
  };

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const m = mode();
    const shown = TOOLS.filter((t) => !t.destructive || m !== 'hidden');
    const names = new Set(shown.map((t) => t.name));
    return { tools: shown.map((t) => toolListing(t, m, (name) => names.has(name))) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = TOOLS_BY_NAME.get(req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${req.params.name}`);
    if (!tool.destructive) return runTool(tool, req.params.arguments, context());
    const m = mode();
    const ctx = context();
    let unconfirmed: string | null = null;
    const ask = async (args: Record<string, unknown>) => {
      const no = await askToConfirm(server, ctx.client, tool.name, args);
      unconfirmed = no?.outcome ?? null;
      return no?.refused ?? null;
    };
    const result =
      m === 'hidden'
        ? hiddenToolRefusal(tool.name, req.params.arguments ?? {})
        : await runTool(tool, req.params.arguments, ctx, m === 'elicit' ? ask : undefined);
    opts.audit(
      `cairn-mcp audit ${JSON.stringify({
        at: new Date().toISOString(),
        tool: tool.name,
        ...subject(req.params.arguments),
        client: ctx.clientInfo?.name ?? null,
        gating: m,
        outcome:
          m === 'hidden' ? 'refused' : (unconfirmed ?? (result.isError ? `error:${String(result._meta?.code)}` : 'ok')),
      })}`,
    );
    return result;
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await listResources(context()) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(req.params.uri, context()));
  if (opts.events) {
    const subscriptions = installSubscriptions(server, opts.events);
    const closing = server.onclose;
    server.onclose = () => {
      subscriptions.close();
      closing?.();
    };
  }
  return server;
}
