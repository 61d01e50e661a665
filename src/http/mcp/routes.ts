import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { QuotaMode } from '../../core/access.js';
import type { Accounts } from '../../core/accounts/index.js';
import { CairnError, toEnvelope } from '../../core/errors.js';
import { parsePosition } from '../../core/events.js';
import { API_KEY } from '../../core/ids.js';
import type { Core } from '../../core/index.js';
import type { McpPrincipal } from '../../core/mcp-sessions.js';
import { LIMITS } from '../../core/plans.js';
import type { Caller } from '../../core/tenants.js';
import type { HostedServerOptions } from '../../mcp/hosted/server.js';
import { EventStream } from '../api/event-stream.js';
import { bearerToken, chargeClientIp } from '../auth.js';
import { eachRateHeader } from '../rate-headers.js';
import { holdUploadSlot } from '../upload-slots.js';
import { type OriginPolicy, refuseHostOrOrigin } from './origin-guard.js';
import { sessionFrames } from './session-stream.js';

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

const SESSION_HEADER = 'mcp-session-id';

/** The session a request names (`Mcp-Session-Id`), if any. */
function sessionIdOf(request: FastifyRequest): string | undefined {
  const id = request.headers[SESSION_HEADER];
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** A session is bound to its tenant and to the credential that opened it (the key, or the OAuth grant). */
const principalOf = (conn: Connection): McpPrincipal => ({ caller: conn.caller, principalId: conn.caller.key.id });

function isInitialize(body: unknown): boolean {
  const isInit = (m: unknown) => (m as { method?: unknown } | null)?.method === 'initialize';
  return Array.isArray(body) ? body.some(isInit) : isInit(body);
}

export interface HostedMcpOptions {
  /** Milliseconds between a GET stream's heartbeats (CAIRN_EVENT_HEARTBEAT_SECONDS, as /v1/events/stream). */
  heartbeatMs: number;
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
 * `{api}/mcp`: the hosted MCP endpoint, Streamable HTTP. Each POST gets a fresh server and
 * transport, closed with the response, so nothing is shared between requests or clients in
 * memory: a client may go on without a session (plain POSTs, as before sessions existed).
 *
 * Sessions exist for resource subscriptions. `initialize` opens one and answers its id in
 * `Mcp-Session-Id`; a request carrying it is checked against the database (any instance of a
 * scale-out set serves it) and refused 404 when the session ended, expired, or was opened by
 * another tenant or credential. `resources/subscribe` records the URI for the session; GET
 * with the session opens the server-to-client SSE stream, which follows the tenant's change
 * feed through the EventHub (events made on any instance) and sends
 * `notifications/resources/updated` for the subscribed URIs; DELETE ends the session.
 *
 * The bearer is a raw API key (every tool) or an OAuth access token bound to this resource (its
 * grant's tier). Each request is admitted like an API call: rate limit, monthly quota, headers;
 * a GET stream counts as one request when opened and takes one of the tenant's event streams.
 */
export function hostedMcpRoutes(
  app: FastifyInstance,
  core: Core,
  accounts: Accounts,
  policy: OriginPolicy,
  opts: HostedMcpOptions,
): void {
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
      request.mcpConnection = await connectionOf(bearer);
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

  const connectionOf = async (bearer: string): Promise<Connection> =>
    API_KEY.test(bearer)
      ? { caller: await core.tenants.authenticate(bearer), tier: 'destroy' }
      : oauthConnection(bearer);

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
      const principal = principalOf(conn);
      const sessionId = sessionIdOf(request);
      let subscriptions: HostedServerOptions['subscriptions'];
      if (isInitialize(request.body)) {
        // Every initialize opens a session; a client that ignores the header goes on statelessly.
        reply.raw.setHeader(SESSION_HEADER, await core.mcpSessions.open(principal));
      } else if (sessionId !== undefined) {
        const session = await core.mcpSessions.resolve(principal, sessionId);
        subscriptions = {
          subscribe: (uri) => core.mcpSessions.subscribe(session, uri),
          unsubscribe: (uri) => core.mcpSessions.unsubscribe(session, uri),
        };
      }
      const [{ StreamableHTTPServerTransport }, { CoreCairnApi }, { createHostedServer }] = await mcpModules();
      const server = createHostedServer({
        client: new CoreCairnApi(core, conn.caller),
        tier: conn.tier,
        ...(conn.clientName ? { clientName: conn.clientName } : {}),
        ...(subscriptions ? { subscriptions } : {}),
      });
      // The SDK's stateless transport: the session was checked above, against the database, which
      // its stateful mode (one transport object per session, in one process's memory) cannot do.
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

  /**
   * GET and DELETE: routes of a session, admitted as the bearer's tenant (`quota`). Without a
   * session there is no stream to GET and nothing to DELETE: 405 (what MCP clients expect of a
   * server without a stream for them).
   */
  const sessionRoute = (
    method: 'GET' | 'DELETE',
    quota: QuotaMode,
    handle: (request: FastifyRequest, reply: FastifyReply, conn: Connection, sessionId: string) => Promise<unknown>,
  ) =>
    app.route({
      method,
      url: '/mcp',
      config: { ownAdmission: true },
      onRequest: guard,
      schema: { hide: true },
      handler: async (request, reply) => {
        const conn = request.mcpConnection;
        if (!conn) throw new Error('MCP guard did not run');
        const sessionId = sessionIdOf(request);
        if (sessionId === undefined) {
          return sendError(
            reply,
            new CairnError(
              'method_not_allowed',
              'GET and DELETE /mcp need an MCP session (the Mcp-Session-Id initialize answered); without one, send JSON-RPC messages with POST.',
            ),
            { Allow: 'POST' },
          );
        }
        if (method === 'GET' && !String(request.headers.accept ?? '').includes('text/event-stream')) {
          return sendError(
            reply,
            new CairnError('invalid_request', 'GET /mcp is a stream: send Accept: text/event-stream.', { status: 406 }),
          );
        }
        const decision = await core.access.admit(conn.caller, { quota });
        eachRateHeader(decision, (name, value) => reply.header(name, value));
        return handle(request, reply, conn, sessionId);
      },
    });

  sessionRoute('GET', 'count', async (request, reply, conn, sessionId) => {
    const principal = principalOf(conn);
    await core.mcpSessions.resolve(principal, sessionId);
    // HEAD (which Fastify routes here too) gets the stream's headers and no stream.
    if (request.method === 'HEAD')
      return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-store').send();
    const tenantId = conn.caller.tenant.id;
    const head = await core.events.head(tenantId);
    const resume = request.headers['last-event-id'];
    const after = typeof resume === 'string' && resume !== '' ? parsePosition(resume, 'Last-Event-ID') : head;
    const bearer = bearerToken(request) ?? '';
    const stream = new EventStream(
      core,
      reply.raw,
      {
        caller: conn.caller,
        filter: { after },
        heartbeatMs: opts.heartbeatMs,
        // The bearer still authenticates as the session's principal, and the session lives (kept alive by this).
        stillAllowed: async () => {
          const now = principalOf(await connectionOf(bearer));
          if (now.caller.tenant.id !== tenantId || now.principalId !== principal.principalId) return false;
          return (await core.mcpSessions.subscriptions(sessionId, true)) !== null;
        },
        frames: sessionFrames(core, sessionId),
      },
      head,
    );
    // Counted with the tenant's /v1/events streams on this instance: 429 beyond, before any byte.
    stream.follow();
    stream.startOn(reply, { [SESSION_HEADER]: sessionId });
  });

  // Ending a session is never refused for the monthly quota (the rate limit still applies).
  sessionRoute('DELETE', 'skip', async (_request, reply, conn, sessionId) => {
    await core.mcpSessions.end(principalOf(conn), sessionId);
    // Its streams, on any instance, end at their next heartbeat or event (the session is gone).
    return reply.status(200).send();
  });
}
