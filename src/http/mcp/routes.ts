import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { QuotaMode } from '../../core/access.js';
import type { Accounts } from '../../core/accounts/index.js';
import { CairnError, toEnvelope } from '../../core/errors.js';
import { API_KEY } from '../../core/ids.js';
import type { Core } from '../../core/index.js';
import { LIMITS } from '../../core/plans.js';
import type { Caller } from '../../core/tenants.js';
import type { HostedServerOptions } from '../../mcp/hosted/server.js';
import { bearerToken, chargeClientIp } from '../auth.js';
import { eachRateHeader } from '../rate-headers.js';
import { holdUploadSlot } from '../upload-slots.js';
import { type OriginPolicy, refuseHostOrOrigin } from './origin-guard.js';

/** Base64 of a 10 MiB store_artifact plus the JSON-RPC around it. */
const MCP_BODY_LIMIT = Math.ceil((LIMITS.jsonDecodedBytes * 4) / 3) + 256 * 1024;

/**
 * The MCP SDK and the tool table, loaded by the first MCP request: they are most of what a server
 * loads at start-up (the MCP SDK alone takes longer than Fastify), and many instances never serve MCP.
 */
let serving:
  | Promise<
      [
        typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
        typeof import('../../mcp/hosted/core-api.js'),
        typeof import('../../mcp/hosted/server.js'),
      ]
    >
  | undefined;
const mcpModules = () =>
  (serving ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('../../mcp/hosted/core-api.js'),
    import('../../mcp/hosted/server.js'),
  ]));

export const protectedResourceMetadataUrl = (apiOrigin: string) =>
  `${apiOrigin}/.well-known/oauth-protected-resource/mcp`;

interface Connection {
  caller: Caller;
  tier: HostedServerOptions['tier'];
  clientName?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    mcpConnection: Connection | null;
  }
}

/** Publishing is not counted against the monthly quota (spec), unpublishing is never refused for it. */
function quotaFor(body: unknown): QuotaMode {
  const msg = body as { method?: unknown; params?: { name?: unknown } } | null;
  if (msg?.method !== 'tools/call') return 'count';
  if (msg.params?.name === 'publish_artifact') return 'check';
  if (msg.params?.name === 'unpublish_artifact') return 'skip';
  return 'count';
}

function sendError(reply: FastifyReply, err: CairnError, headers: Record<string, string> = {}): FastifyReply {
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return reply.status(err.status).type('application/json; charset=utf-8').send(toEnvelope(err, reply.request.id));
}

/**
 * `{api}/mcp`: the hosted MCP endpoint, Streamable HTTP, stateless. Each POST gets a fresh server
 * and transport, closed with the response, so nothing is shared between requests or clients.
 * The bearer is a raw API key (every tool) or an OAuth access token bound to this resource (its
 * grant's tier). Each request is admitted like an API call: rate limit, monthly quota, headers.
 */
export function hostedMcpRoutes(app: FastifyInstance, core: Core, accounts: Accounts, policy: OriginPolicy): void {
  app.decorateRequest('mcpConnection', null);

  const challenge = (invalidToken: boolean) => ({
    'WWW-Authenticate': `Bearer ${invalidToken ? 'error="invalid_token", ' : ''}resource_metadata="${protectedResourceMetadataUrl(core.deps.origins.api)}"`,
  });

  /** Host/Origin first (no request from a rebound name or a foreign page gets further), then the bearer. */
  const guard = async (request: FastifyRequest, reply: FastifyReply) => {
    const refusal = refuseHostOrOrigin(request.headers, policy);
    if (refusal) return sendError(reply, new CairnError('origin_not_allowed', refusal));
    const bearer = bearerToken(request);
    if (!bearer) {
      await chargeClientIp(core, request, reply);
      return sendError(
        reply,
        new CairnError(
          'unauthorized',
          'Authorization required: connect with OAuth, or send Authorization: Bearer ak_live_….',
        ),
        challenge(false),
      );
    }
    try {
      request.mcpConnection = API_KEY.test(bearer)
        ? { caller: await core.tenants.authenticate(bearer), tier: 'destroy' }
        : await oauthConnection(bearer);
    } catch (err) {
      if (err instanceof CairnError && err.code === 'unauthorized') {
        await chargeClientIp(core, request, reply);
        return sendError(reply, err, challenge(true));
      }
      throw err;
    }
    // A large tool call (an upload's base64 content) takes one of the tenant's upload slots.
    holdUploadSlot(core, request, reply, request.mcpConnection.caller.tenant.id);
  };

  const oauthConnection = async (bearer: string): Promise<Connection> => {
    const found = await accounts.tokens.authenticate(bearer);
    const client = await accounts.clients.get(found.grant.clientId);
    // OAuth callers have no API key; the token's last four characters stand in for whoami's api_key_last_4.
    const key = {
      id: found.grant.id,
      tenantId: found.tenant.id,
      hash: '',
      last4: bearer.slice(-4),
      createdAt: found.grant.createdAt,
      revokedAt: null,
    };
    return { caller: { tenant: found.tenant, key }, tier: found.tier, clientName: client?.name };
  };

  app.post(
    '/mcp',
    {
      bodyLimit: MCP_BODY_LIMIT,
      // Admitted below as the bearer's tenant, not by the API's per-IP window for key-less routes.
      config: { ownAdmission: true },
      onRequest: guard,
      schema: { hide: true },
    },
    async (request, reply) => {
      const conn = request.mcpConnection;
      if (!conn) throw new Error('MCP guard did not run');
      const decision = await core.access.admit(conn.caller, { quota: quotaFor(request.body) });
      // The transport writes the raw response; headers set here are merged into it.
      eachRateHeader(decision, (name, value) => reply.raw.setHeader(name, value));
      const [{ StreamableHTTPServerTransport }, { CoreCairnApi }, { createHostedServer }] = await mcpModules();
      const server = createHostedServer({
        client: new CoreCairnApi(core, conn.caller),
        tier: conn.tier,
        ...(conn.clientName ? { clientName: conn.clientName } : {}),
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  // Stateless: no server-initiated stream to GET and no session to DELETE.
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (_request, reply) =>
        sendError(
          reply,
          new CairnError('method_not_allowed', 'This MCP endpoint is stateless: send JSON-RPC messages with POST.'),
          { Allow: 'POST' },
        ),
    });
  }
}
