import type { FastifyInstance, FastifyReply } from 'fastify';
import type { BrowserSession } from '../../core/accounts/index.js';
import type { AuthorizeRequest } from '../../core/accounts/oauth-authorize.js';
import { TOOLS } from '../../mcp/tools.js';
import type { GrantTier } from '../../ports/account-store.js';
import { isTier, SCOPE_OF, TIER_LABEL, TIERS } from '../../shared/scopes.js';
import { type DashboardContext, field } from '../dashboard/context.js';
import { centeredPage, csrfField, errorPage, sendHtml } from '../dashboard/layout.js';
import { html } from '../render/html.js';

/** The request parameters the consent form carries through, unchanged. */
const CARRIED = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'code_challenge',
  'code_challenge_method',
  'resource',
  'scope',
];

const TIER_HELP: Record<GrantTier, string> = {
  read: 'See the account, list and read artifacts and sessions, get private download URLs.',
  write: 'Also store artifacts, large uploads, and publish or unpublish pages.',
  destroy: 'Also create and revoke public download links, delete artifacts and seal sessions.',
};

/** Tools a tier adds over the one before it (Read also covers every resource). */
const toolsOf = (tier: GrantTier) => TOOLS.filter((t) => t.tier === tier).map((t) => t.name);

function consentPage(session: BrowserSession, req: AuthorizeRequest, carried: Record<string, string>) {
  const { client } = req;
  return centeredPage(
    'Connect an app',
    html`<h1>Allow <span data-client-name>${client.name}</span> to use your Cairn account?</h1>
${client.selfRegistered && html`<p><span class="badge warn" data-unverified>unverified</span> This app registered itself; Cairn cannot confirm who made it. Only continue if you started this connection.</p>`}
<p>Signed in as <strong>${session.user.email}</strong> (account ${session.tenant.name}). After you decide, you go back to:</p>
<p class="secret" data-redirect-uri>${req.redirectUri}</p>
<form method="post" action="/oauth/authorize">
${csrfField(session.csrf)}
${Object.entries(carried).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<fieldset class="tiers"><legend>Choose what it may do (each level includes the ones above):</legend>
${TIERS.map(
  (tier) => html`<label><input type="radio" name="tier" value="${tier}"${tier === 'read' ? html` checked` : ''}>
<span><strong>${TIER_LABEL[tier]}</strong> <span class="mono muted">${SCOPE_OF[tier]}</span><small>${TIER_HELP[tier]}</small>
<small class="mono">${toolsOf(tier).join(', ')}${tier === 'read' ? ', all resources' : ''}</small></span></label>`,
)}
</fieldset>
<div class="actions"><button class="btn" type="submit" name="decision" value="approve">Allow</button>
<button class="btn secondary" type="submit" name="decision" value="deny">Deny</button></div>
</form>`,
    true,
  );
}

function carriedParams(source: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of CARRIED) if (typeof source[k] === 'string') out[k] = source[k] as string;
  return out;
}

const originOf = (uri: string) => new URL(uri).origin;

/**
 * `/oauth/authorize`: log in if needed, then the consent screen, then back to the client with a
 * code (or an error). Bad client or redirect URI: an error page here, never a redirect.
 */
export function authorizeRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { accounts } = ctx;

  /**
   * The checked request, or null once a refusal has been answered (an error page, or the error
   * sent back to the client). Never the reply itself: a Fastify reply is a thenable, and awaiting
   * it from an async function resolves to undefined.
   */
  const start = async (reply: FastifyReply, params: Record<string, string>): Promise<AuthorizeRequest | null> => {
    const check = await accounts.authorize.check(params);
    if (check.kind === 'fatal') sendHtml(reply, 400, errorPage('Cannot connect this app', check.message));
    else if (check.kind === 'redirect') reply.redirect(check.url, 302);
    else return check.request;
    return null;
  };

  app.get('/oauth/authorize', { schema: { hide: true } }, async (request, reply) => {
    const params = carriedParams(request.query as Record<string, unknown>);
    const checked = await start(reply, params);
    if (!checked) return reply;
    const session = await ctx.session(request);
    if (!session) return reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
    return sendHtml(reply, 200, consentPage(session, checked, params), {
      formActionOrigins: [originOf(checked.redirectUri)],
    });
  });

  app.post('/oauth/authorize', { schema: { hide: true } }, async (request, reply) => {
    const params = carriedParams(request.body as Record<string, unknown>);
    const session = await ctx.session(request);
    if (!session) {
      return reply.redirect(
        `/login?next=${encodeURIComponent(`/oauth/authorize?${new URLSearchParams(params)}`)}`,
        303,
      );
    }
    if (!ctx.checkCsrf(request, reply, session.id)) return reply;
    const checked = await start(reply, params);
    if (!checked) return reply;
    if (field(request.body, 'decision') !== 'approve') return reply.redirect(accounts.authorize.deny(checked), 303);
    const tier = field(request.body, 'tier');
    if (!isTier(tier)) {
      return sendHtml(reply, 400, consentPage(session, checked, params), {
        formActionOrigins: [originOf(checked.redirectUri)],
      });
    }
    return reply.redirect(await accounts.authorize.approve(session, checked, tier), 303);
  });
}
