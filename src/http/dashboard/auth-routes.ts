import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { html } from '../render/html.js';
import { type DashboardContext, field, safeNext, userError } from './context.js';
import { centeredPage, csrfField, notice, sendHtml } from './layout.js';

type Mode = 'login' | 'signup';

const TEXT = {
  login: { title: 'Log in', button: 'Log in', other: 'signup', otherText: 'New to Cairn? Create an account' },
  signup: {
    title: 'Create your Cairn account',
    button: 'Create account',
    other: 'login',
    otherText: 'Have an account? Log in',
  },
} as const;

function authForm(mode: Mode, csrf: string, next: string, error?: string, email = '') {
  const t = TEXT[mode];
  const otherHref = `/${t.other}${next === '/dashboard' ? '' : `?next=${encodeURIComponent(next)}`}`;
  return centeredPage(
    t.title,
    html`<h1>${t.title}</h1>
${mode === 'signup' && html`<p>A free Cairn account: 1 GB of storage and 10,000 requests a month.</p>`}
${notice('error', error)}
<form method="post" action="/${mode}">
${csrfField(csrf)}<input type="hidden" name="next" value="${next}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="email" required value="${email}">
<label for="password">Password</label>
<input id="password" name="password" type="password" minlength="${mode === 'signup' ? 10 : 1}" autocomplete="${mode === 'signup' ? 'new-password' : 'current-password'}" required>
<button class="btn" type="submit">${t.button}</button>
</form>
<p class="note"><a href="${otherHref}">${t.otherText}</a></p>`,
  );
}

/** Sign up, log in and log out. The forms' CSRF tokens are bound to a pre-session cookie. */
export function authRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  for (const mode of ['login', 'signup'] as const) {
    app.get(`/${mode}`, { schema: { hide: true } }, async (request, reply) => {
      const next = safeNext((request.query as Record<string, unknown>).next, ctx.core.deps.origins.api);
      if (await ctx.session(request)) return reply.redirect(next, 303);
      return sendHtml(reply, 200, authForm(mode, ctx.accounts.sessions.csrfFor(ctx.preSession(request, reply)), next));
    });

    app.post(`/${mode}`, { schema: { hide: true } }, async (request, reply) => submit(mode, request, reply));
  }

  async function submit(mode: Mode, request: FastifyRequest, reply: FastifyReply) {
    const pre = ctx.preSession(request, reply);
    if (!ctx.checkCsrf(request, reply, pre)) return reply;
    const next = safeNext(field(request.body, 'next'), ctx.core.deps.origins.api);
    const email = field(request.body, 'email') ?? '';
    const password = field(request.body, 'password');
    try {
      const principal =
        mode === 'signup'
          ? await ctx.accounts.users.signUp(email, password, request.ip)
          : await ctx.accounts.users.logIn(email, password, request.ip);
      ctx.startSession(reply, await ctx.accounts.sessions.create(principal));
      return reply.redirect(next, 303);
    } catch (thrown) {
      const err = userError(thrown);
      if (err.extras.retryAfterSeconds !== undefined) reply.header('Retry-After', String(err.extras.retryAfterSeconds));
      const csrf = ctx.accounts.sessions.csrfFor(pre);
      return sendHtml(reply, err.status, authForm(mode, csrf, next, err.message, email));
    }
  }

  app.post('/logout', { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.session(request);
    if (!session) return reply.redirect('/login', 303);
    if (!ctx.checkCsrf(request, reply, session.id)) return reply;
    await ctx.accounts.sessions.destroy(session.id);
    ctx.endSession(reply);
    return reply.redirect('/login', 303);
  });
}
