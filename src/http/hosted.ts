import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Accounts } from '../core/accounts/index.js';
import type { Core } from '../core/index.js';
import { accountRoutes } from './dashboard/account-routes.js';
import { appsRoutes } from './dashboard/apps-routes.js';
import { artifactRoutes } from './dashboard/artifact-routes.js';
import { authRoutes } from './dashboard/auth-routes.js';
import { DashboardContext } from './dashboard/context.js';
import { DASHBOARD_CSS, DASHBOARD_CSS_PATH } from './dashboard/styles.js';
import { webhookRoutes } from './dashboard/webhook-routes.js';
import { faviconRoute } from './favicon.js';
import { isLoopbackBind } from './mcp/origin-guard.js';
import { hostedMcpRoutes } from './mcp/routes.js';
import { authorizeRoutes } from './oauth/authorize-routes.js';
import { oauthEndpointRoutes } from './oauth/endpoint-routes.js';
import { oauthMetadataRoutes } from './oauth/metadata-routes.js';

const FORM_BODY_LIMIT = 64 * 1024;

/**
 * Everything of the API origin that is for people and their apps rather than for API keys: the
 * hosted MCP endpoint, the OAuth 2.1 authorization server and the tenant dashboard. Registered as
 * one scope, so the HTML form parser exists only here.
 */
export function hostedPlugin(
  accounts: Accounts,
  config: Pick<Config, 'host' | 'mcpAllowedOrigins' | 'eventHeartbeatSeconds'>,
) {
  return async (app: FastifyInstance, core: Core): Promise<void> => {
    await app.register(async (scope) => {
      // Browser forms and OAuth's token/revoke requests, parsed without a dependency.
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
        (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
      );
      const ctx = new DashboardContext(core, accounts);
      scope.get(DASHBOARD_CSS_PATH, { schema: { hide: true } }, async (_request, reply) =>
        reply
          .type('text/css; charset=utf-8')
          .header('Cache-Control', 'public, max-age=31536000, immutable')
          .header('X-Content-Type-Options', 'nosniff')
          .send(DASHBOARD_CSS),
      );
      scope.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard', 303));
      faviconRoute(scope);
      authRoutes(scope, ctx);
      accountRoutes(scope, ctx);
      artifactRoutes(scope, ctx);
      webhookRoutes(scope, ctx);
      appsRoutes(scope, ctx);
      authorizeRoutes(scope, ctx);
      oauthMetadataRoutes(scope, core);
      oauthEndpointRoutes(scope, accounts);
      hostedMcpRoutes(
        scope,
        core,
        accounts,
        {
          apiOrigin: () => core.deps.origins.api,
          extraOrigins: config.mcpAllowedOrigins,
          loopback: isLoopbackBind(config.host),
        },
        { heartbeatMs: config.eventHeartbeatSeconds * 1000 },
      );
    });
  };
}
