import type { FastifyInstance } from 'fastify';
import { mcpResourceOf } from '../../core/accounts/index.js';
import type { Core } from '../../core/index.js';

/**
 * Discovery documents: protected-resource metadata (RFC 9728) for the MCP endpoint, at both the
 * root and the resource-path location, and authorization-server metadata (RFC 8414). The only
 * scope advertised is `openid`: clients that request "all of scopes_supported" (the MCP scope
 * selection strategy) then ask for exactly what the authorization endpoint accepts.
 */
export function oauthMetadataRoutes(app: FastifyInstance, core: Core): void {
  const api = () => core.deps.origins.api;

  const resourceMetadata = () => ({
    resource: mcpResourceOf(api()),
    authorization_servers: [api()],
    scopes_supported: ['openid'],
    bearer_methods_supported: ['header'],
    resource_name: 'Cairn MCP',
    resource_documentation: `${api()}/dashboard`,
  });
  for (const url of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
    app.get(url, { schema: { hide: true } }, async (_request, reply) => {
      reply.header('Access-Control-Allow-Origin', '*');
      return resourceMetadata();
    });
  }

  app.get('/.well-known/oauth-authorization-server', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Access-Control-Allow-Origin', '*');
    return {
      issuer: api(),
      authorization_endpoint: `${api()}/oauth/authorize`,
      token_endpoint: `${api()}/oauth/token`,
      registration_endpoint: `${api()}/oauth/register`,
      revocation_endpoint: `${api()}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: ['openid'],
      authorization_response_iss_parameter_supported: true,
      service_documentation: `${api()}/dashboard`,
    };
  });
}
