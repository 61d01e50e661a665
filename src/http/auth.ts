import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { QuotaMode } from '../core/access.js';
import type { Core } from '../core/index.js';
import type { Caller } from '../core/tenants.js';
import { setRateHeaders } from './rate-headers.js';
import { holdUploadSlot } from './upload-slots.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Bearer API key required (all of /v1 except public pages). */
    auth?: boolean;
    /** How the call meets the monthly request quota; default `count` (publish: `check`, unpublish: `skip`). */
    quota?: QuotaMode;
    /** A public page endpoint: limited as the page's tenant when its `:slug` resolves, else per IP. */
    publicPage?: boolean;
    /** The route admits its callers itself (the hosted MCP endpoint's own bearer kinds). */
    ownAdmission?: boolean;
  }
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : '';
}

/**
 * Admission runs at `onRequest` for every request of the API listener, before any body is read,
 * so an unauthorised, suspended, rate-limited or over-quota upload is refused without accepting
 * its bytes, as is a large one past its tenant's uploads in flight (holdUploadSlot). Every
 * request takes one rate decision, whose X-RateLimit-* headers go on the response whatever it
 * turns out to be: the tenant's for authenticated calls and for public page calls
 * whose slug resolves, the client IP's for everything else (no or a bad key, /health, unknown
 * routes). Refusals after the decision carry it (`err.decision`) to the error handler.
 */
export function installAdmission(app: FastifyInstance, core: Core): void {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request, reply) => {
    // Read once: Fastify builds `routeOptions` anew at every access.
    const config = request.routeOptions.config;
    if (config.ownAdmission) return;
    await admit(core, request, reply, config, config.quota ?? 'count');
  });
}

async function admit(
  core: Core,
  request: FastifyRequest,
  reply: FastifyReply,
  config: FastifyContextConfig,
  quota: QuotaMode,
): Promise<void> {
  if (config.auth) {
    const caller = await authenticate(core, request, reply);
    setRateHeaders(reply, await core.access.admit(caller, { quota }));
    request.caller = caller;
    holdUploadSlot(core, request, reply, caller.tenant.id);
    return;
  }
  const slug = config.publicPage ? (request.params as { slug?: string }).slug : undefined;
  const decision =
    slug === undefined
      ? await core.access.limitAnonymous(request.ip)
      : await core.access.limitPublicPage(slug, request.ip);
  setRateHeaders(reply, decision);
}

/** A failed key names no tenant, so the client IP pays for the attempt (429 beyond its limit). */
export async function chargeClientIp(core: Core, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  setRateHeaders(reply, await core.access.limitAnonymous(request.ip));
}

async function authenticate(core: Core, request: FastifyRequest, reply: FastifyReply): Promise<Caller> {
  try {
    return await core.tenants.authenticate(bearerToken(request));
  } catch (err) {
    await chargeClientIp(core, request, reply);
    throw err;
  }
}

/** The caller of an authenticated route (the hook guarantees it). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route is missing config.auth');
  return request.caller;
}
