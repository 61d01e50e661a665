import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Accounts } from '../../core/accounts/index.js';
import { OAuthError } from '../../core/accounts/index.js';
import { isCairnError } from '../../core/errors.js';

type Params = Record<string, string | undefined>;

/** Form fields (or a JSON object) as strings; anything else is absent. */
function params(body: unknown): Params {
  const out: Params = {};
  if (typeof body !== 'object' || body === null) return out;
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** RFC 6749 §5.2 error bodies (not Cairn's envelope: OAuth clients parse this shape). */
function sendOAuthError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof OAuthError) return reply.status(err.status).send(err.toJSON());
  // Too many calls from this address: OAuth's "try again later" code (RFC 6749 §4.1.2.1), not
  // invalid_request, which tells a client its request is wrong and not worth repeating.
  if (isCairnError(err) && err.code === 'rate_limited') {
    reply.header('Retry-After', String(err.extras.retryAfterSeconds ?? 1));
    return reply.status(429).send({ error: 'temporarily_unavailable', error_description: err.message });
  }
  throw err;
}

/**
 * The JSON endpoints of the authorization server: registration (RFC 7591), token, revocation
 * (RFC 7009). Public clients only, so no client authentication; CORS is open because these take
 * no cookies and browser-based MCP clients call them.
 */
export function oauthEndpointRoutes(app: FastifyInstance, accounts: Accounts): void {
  app.addHook('onSend', async (request, reply) => {
    if (/^\/oauth\/(register|token|revoke)\b/.test(request.url)) {
      reply.header('Access-Control-Allow-Origin', '*');
      reply.header('Cache-Control', 'no-store');
    }
  });
  app.options('/oauth/:endpoint', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .status(204)
      .header('Access-Control-Allow-Origin', '*')
      .header('Access-Control-Allow-Methods', 'POST')
      .header('Access-Control-Allow-Headers', 'Content-Type, Authorization, MCP-Protocol-Version')
      .header('Access-Control-Max-Age', '600')
      .send(),
  );

  app.post('/oauth/register', { schema: { hide: true } }, async (request, reply) => {
    try {
      return reply.status(201).send(await accounts.clients.register(request.body, request.ip));
    } catch (err) {
      return sendOAuthError(reply, err);
    }
  });

  app.post('/oauth/token', { schema: { hide: true } }, async (request, reply) => {
    try {
      return reply.header('Pragma', 'no-cache').send(await accounts.tokens.token(params(request.body)));
    } catch (err) {
      return sendOAuthError(reply, err);
    }
  });

  app.post('/oauth/revoke', { schema: { hide: true } }, async (request, reply) => {
    await accounts.tokens.revoke(params(request.body));
    return reply.status(200).send({});
  });
}
