import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BrowserSession } from '../../core/accounts/index.js';
import type { RawQuery } from '../../core/list-query.js';
import { EVENT_TYPES } from '../../shared/event-types.js';
import type { DeliveryList, DeliveryRecord, WebhookRecord } from '../../wire/webhooks.js';
import { html, type SafeHtml } from '../render/html.js';
import { confirmPage } from './confirm.js';
import { type DashboardContext, dashboardCaller, field, sendUserError, userError } from './context.js';
import { csrfField, dashboardPage, notice, sendHtml, shortTime } from './layout.js';

const SECTION = '/dashboard/webhooks';
const webhookPath = (id: string) => `${SECTION}/${encodeURIComponent(id)}`;

const DONE: Record<string, string> = {
  deleted: 'Webhook deleted: nothing more is delivered to it.',
};

/** `cursor` and `limit` of a list page, passed to the core as the API passes them (it checks them). */
function pageQuery(query: unknown): RawQuery {
  const q: RawQuery = {};
  for (const name of ['cursor', 'limit'] as const) {
    const v = field(query, name);
    if (v) q[name] = v;
  }
  return q;
}

/** A "Next page" link keeping the page size, when there is a next page. */
function nextLink(path: string, query: RawQuery, nextCursor: string | null): SafeHtml | '' {
  if (!nextCursor) return '';
  const params = new URLSearchParams({ ...(query.limit ? { limit: String(query.limit) } : {}), cursor: nextCursor });
  return html`<p><a class="btn secondary small" href="${path}?${params.toString()}" data-next>Next page</a></p>`;
}

const statusBadge = (w: WebhookRecord) =>
  w.status === 'active'
    ? html`<span class="badge" data-status="active">active</span>`
    : html`<span class="badge warn" data-status="disabled">disabled</span>`;

/** The receiver's answer: its status, or why none came; the error only when it says more than the status. */
function response(d: DeliveryRecord): string {
  if (d.status_code === null) return d.error ?? '';
  return d.error && d.error !== `HTTP ${d.status_code}` ? `${d.status_code} ${d.error}` : String(d.status_code);
}

const typesText = (w: WebhookRecord) => (w.types === null ? 'all types' : w.types.join(', '));

/** The panel that shows a secret the one time it is shown (creation, rotation). */
const secretPanel = (title: string, secret: string, more: string) =>
  html`<section class="panel pad" data-new-secret><h2>${title}</h2>
<p class="success">Copy it now: it is shown only this once. ${more}</p>
<p class="secret" data-secret>${secret}</p></section>`;

/** The create form: a URL, the event types (none ticked: every type) and an optional session. */
function createForm(session: BrowserSession): SafeHtml {
  return html`<section class="panel pad" data-create-webhook><h2>New webhook</h2>
<p>Cairn POSTs each event after now that matches to the URL, signed as the Standard Webhooks specification says with a secret shown once when you create it, in order, retried with backoff for 24 hours.</p>
<form method="post" action="${SECTION}" class="publish">${csrfField(session.csrf)}
<div><label for="wh-url">URL</label><input id="wh-url" name="url" type="url" required maxlength="2048" placeholder="https://example.com/hooks/cairn"></div>
<fieldset class="tiers"><legend>Event types (none ticked: every type)</legend>
<div class="type-grid">${EVENT_TYPES.map(
    (t) =>
      html`<label class="check"><input type="checkbox" name="type.${t}" value="on"><span class="mono">${t}</span></label>`,
  )}</div></fieldset>
<div><label for="wh-session">Only the events of session (optional)</label><input id="wh-session" name="session_id" maxlength="200"></div>
<div><button class="btn" type="submit">Create webhook</button></div>
</form></section>`;
}

/** The create form's fields as the API's body (a form sends each ticked type as its own field). */
function createBody(body: unknown): { url?: string; types?: string[]; session_id?: string } {
  const types = EVENT_TYPES.filter((t) => field(body, `type.${t}`) === 'on');
  const sessionId = field(body, 'session_id')?.trim();
  return {
    url: field(body, 'url')?.trim() ?? '',
    ...(types.length > 0 ? { types } : {}),
    ...(sessionId ? { session_id: sessionId } : {}),
  };
}

/** Webhooks: the tenant's endpoints, creating one (secret shown once), rotating, deleting, enabling, each one's delivery log. */
export function webhookRoutes(app: FastifyInstance, ctx: DashboardContext): void {
  const { core } = ctx;

  const listPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    session: BrowserSession,
    status: number,
    top: SafeHtml | string = '',
  ) => {
    const query = pageQuery(request.query);
    let body: SafeHtml | string;
    try {
      const list = await core.webhooks.list(dashboardCaller(session), query);
      const rows = list.webhooks.map(
        (
          w,
        ) => html`<tr data-webhook="${w.webhook_id}"><td><a class="mono" href="${webhookPath(w.webhook_id)}">${w.url}</a></td>
<td class="mono">${typesText(w)}</td><td class="mono">${w.session_id ?? 'any'}</td><td>${statusBadge(w)}</td><td class="nowrap">${shortTime(w.created_at)}</td>
<td class="nowrap"><a class="btn secondary small" href="${webhookPath(w.webhook_id)}">Delivery log</a> <a class="btn secondary small" href="${webhookPath(w.webhook_id)}/rotate">Rotate secret…</a> <a class="btn danger small" href="${webhookPath(w.webhook_id)}/delete">Delete…</a></td></tr>`,
      );
      body =
        rows.length === 0
          ? html`<p class="muted">No webhooks yet.</p>`
          : html`<div class="table-scroll"><table><thead><tr><th>URL</th><th>Event types</th><th>Session</th><th>State</th><th>Created</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>
${nextLink(SECTION, query, list.next_cursor)}`;
    } catch (thrown) {
      const err = userError(thrown);
      status = err.status;
      body = notice('error', err.message);
    }
    return sendHtml(
      reply,
      status,
      dashboardPage(
        session,
        SECTION,
        'Webhooks',
        html`${top}${createForm(session)}<section class="panel pad"><h2>Webhooks</h2>${body}</section>`,
      ),
    );
  };

  app.get(SECTION, { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    const done = DONE[field(request.query, 'done') ?? ''];
    return listPage(request, reply, session, 200, notice('success', done));
  });

  app.post(SECTION, { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    try {
      const made = await core.webhooks.create(dashboardCaller(session), createBody(request.body));
      const top = html`${secretPanel(
        'Your new webhook’s signing secret',
        made.secret,
        'Verify each delivery’s webhook-signature header with it (the SDKs do: verifyWebhook in TypeScript, verify_webhook in Python).',
      )}`;
      return listPage(request, reply, session, 201, top);
    } catch (thrown) {
      const err = userError(thrown);
      return listPage(request, reply, session, err.status, notice('error', err.message));
    }
  });

  /** One webhook's page: its state, then its delivery log (newest first, a page at a time). */
  const detail = async (
    request: FastifyRequest,
    reply: FastifyReply,
    session: BrowserSession,
    id: string,
    top: SafeHtml | string = '',
  ) => {
    const caller = dashboardCaller(session);
    const query = pageQuery(request.query);
    let w: WebhookRecord;
    let log: DeliveryList;
    try {
      w = await core.webhooks.get(caller, id);
      log = await core.webhooks.deliveries(caller, id, query);
    } catch (thrown) {
      return sendUserError(reply, session, SECTION, 'Webhook', thrown);
    }
    const fields: [string, string][] = [
      ['webhook_id', w.webhook_id],
      ['url', w.url],
      ['types', typesText(w)],
      ['session_id', w.session_id ?? 'any'],
      ['status', w.status],
      ['created_at', w.created_at],
      ['failing_since', w.failing_since ?? ''],
      ['disabled_at', w.disabled_at ?? ''],
      ['last_event_id', w.last_event_id ?? ''],
    ];
    const rows = log.deliveries.map(
      (d) => html`<tr data-delivery="${d.delivery_id}"><td class="nowrap">${shortTime(d.created_at)}</td>
<td class="mono">${d.event_id}</td><td class="mono">${d.event_type}</td><td>${d.attempt}</td>
<td>${d.delivered ? html`<span class="badge" data-result="delivered">delivered</span>` : html`<span class="badge warn" data-result="failed">failed</span>`}</td>
<td class="mono" data-response>${response(d)}</td><td class="nowrap">${d.duration_ms} ms</td></tr>`,
    );
    return sendHtml(
      reply,
      200,
      dashboardPage(
        session,
        SECTION,
        'Webhook',
        html`${top}
<div class="actions"><a class="btn secondary small" href="${SECTION}">All webhooks</a>
<a class="btn secondary small" href="${webhookPath(w.webhook_id)}/rotate">Rotate secret…</a>
<a class="btn danger small" href="${webhookPath(w.webhook_id)}/delete">Delete…</a></div>
<section class="panel pad"><h2>Details</h2><div class="table-scroll"><table class="fields"><tbody>${fields.map(([k, v]) => html`<tr><th scope="row" class="mono">${k}</th><td class="mono" data-field="${k}">${v}</td></tr>`)}</tbody></table></div>
${w.status === 'disabled' && html`<div class="inline-form" data-disabled><p class="muted">Disabled after 24 hours of failures.</p><form method="post" action="${webhookPath(w.webhook_id)}/enable">${csrfField(session.csrf)}<button class="btn small" type="submit">Enable</button></form></div>`}</section>
<section class="panel pad" data-delivery-log><h2>Delivery log</h2><p class="muted">Each attempt to deliver an event, newest first, kept 7 days.</p>
${
  rows.length === 0
    ? html`<p class="muted">No delivery attempts yet.</p>`
    : html`<div class="table-scroll"><table><thead><tr><th>Time (UTC)</th><th>Event</th><th>Type</th><th>Attempt</th><th>Result</th><th>Response</th><th>Took</th></tr></thead><tbody>${rows}</tbody></table></div>`
}${nextLink(webhookPath(w.webhook_id), query, log.next_cursor)}</section>`,
      ),
    );
  };

  app.get(`${SECTION}/:id`, { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session) return reply;
    return detail(request, reply, session, (request.params as { id: string }).id);
  });

  const confirms = {
    delete: {
      title: 'Delete webhook?',
      consequence: (w: WebhookRecord) =>
        `Nothing more is delivered to ${w.url}, and its delivery log goes with it. This cannot be undone; you can create a new webhook afterwards.`,
      button: 'Delete webhook',
    },
    rotate: {
      title: 'Rotate the signing secret?',
      consequence: (w: WebhookRecord) =>
        `A new secret is made and shown once. Deliveries to ${w.url} carry a signature with the new secret and, for 24 hours, one with the old, so the receiver can switch without a gap.`,
      button: 'Rotate secret',
    },
  } as const;

  for (const verb of ['delete', 'rotate'] as const) {
    app.get(`${SECTION}/:id/${verb}`, { schema: { hide: true } }, async (request, reply) => {
      const session = await ctx.requireSession(request, reply);
      if (!session) return reply;
      const { id } = request.params as { id: string };
      let w: WebhookRecord;
      try {
        w = await core.webhooks.get(dashboardCaller(session), id);
      } catch (thrown) {
        return sendUserError(reply, session, SECTION, 'Webhook', thrown);
      }
      const c = confirms[verb];
      return sendHtml(
        reply,
        200,
        confirmPage(session, SECTION, {
          title: c.title,
          consequence: c.consequence(w),
          action: `${webhookPath(w.webhook_id)}/${verb}`,
          button: c.button,
          back: webhookPath(w.webhook_id),
        }),
      );
    });
  }

  app.post(`${SECTION}/:id/delete`, { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { id } = request.params as { id: string };
    try {
      await core.webhooks.delete(dashboardCaller(session), id);
    } catch (thrown) {
      return sendUserError(reply, session, SECTION, 'Webhook', thrown);
    }
    return reply.redirect(`${SECTION}?done=deleted`, 303);
  });

  app.post(`${SECTION}/:id/enable`, { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { id } = request.params as { id: string };
    try {
      await core.webhooks.enable(dashboardCaller(session), id);
    } catch (thrown) {
      return sendUserError(reply, session, SECTION, 'Webhook', thrown);
    }
    const done = 'Enabled: delivery resumes from the first event it did not deliver, if still kept (7 days).';
    return detail(request, reply, session, id, notice('success', done));
  });

  app.post(`${SECTION}/:id/rotate`, { schema: { hide: true } }, async (request, reply) => {
    const session = await ctx.requireSession(request, reply);
    if (!session || !ctx.checkCsrf(request, reply, session.id)) return reply;
    const { id } = request.params as { id: string };
    let secret: string;
    try {
      secret = (await core.webhooks.rotateSecret(dashboardCaller(session), id)).secret;
    } catch (thrown) {
      return sendUserError(reply, session, SECTION, 'Webhook', thrown);
    }
    const top = secretPanel(
      'The new signing secret',
      secret,
      'The old secret keeps signing beside it for 24 hours; switch the receiver to this one before then.',
    );
    return detail(request, reply, session, id, top);
  });
}
