import type { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../../core/index.js';
import { callerOf } from '../../auth.js';
import {
  ArtifactIdParams,
  artifactErrors,
  ErrorEnvelope,
  errorResponse,
  GateInfo,
  PublishBody,
  PublishResult,
  ReportBody,
  ReportReceipt,
  SlugParams,
  UnlockBody,
  UnlockResult,
  UnpublishResult,
} from '../schemas.js';

const security = [{ bearer: [] }];
const publishForbidden = Type.Ref(ErrorEnvelope, {
  description:
    '`quota_exceeded` (password access on the Free plan, or the monthly request quota is reached), ' +
    'or `page_taken_down` (an operator took this page down; publishing it is refused ' +
    'until the operator restores it).',
});
const publicErrors = {
  404: errorResponse('`artifact_not_found`: no live page has this slug (whatever the reason).'),
  429: errorResponse('`rate_limited`: too many calls from this client; `Retry-After` says when to try again.'),
};

/** A report body is read up to this size; a larger one is answered 202 and not forwarded. */
export const REPORT_BODY_MAX = 64 * 1024;
const OVERSIZED = Symbol('oversized report body');
/** The route's body is whatever readReportBody made of it, not the documented shape. */
const isOversized = (body: unknown) => body === OVERSIZED;

/**
 * Reads a report body leniently: JSON when it parses, `{}` when it does not, OVERSIZED past
 * REPORT_BODY_MAX. It never fails, because the spec allows a report no answer but 202 (or 429).
 * What is left of an oversized body is discarded as it arrives (Node drains it after the reply).
 */
function readReportBody(payload: Readable): Promise<unknown> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (value: unknown) => {
      payload.off('data', onData).off('end', onEnd).off('error', onError);
      resolve(value);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= REPORT_BODY_MAX) chunks.push(chunk);
      else {
        finish(OVERSIZED);
        payload.resume();
      }
    };
    const onEnd = () => {
      try {
        finish(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        finish({});
      }
    };
    // The client went away mid-body: there is nobody to answer and nothing to forward.
    const onError = () => finish(OVERSIZED);
    payload.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

const REPORT_PATH = /^\/v1\/public\/pages\/[^/?#]*\/report(?:[?#]|$)/;

/**
 * For the router's own refusals (a path segment over 512 characters, bad percent-encoding),
 * which happen before any route runs: a report still gets its 202, never a 400.
 */
export function answerUnroutableReport(request: FastifyRequest, reply: FastifyReply): boolean {
  if (request.method !== 'POST' || !REPORT_PATH.test(request.url)) return false;
  reply.status(202).send({ received: true });
  return true;
}

/** Publishing (authenticated) and the three public page endpoints (no key). */
export function pageRoutes(instance: FastifyInstance, core: Core): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/artifacts/:id/publish',
    {
      // Publishing is not counted against the monthly quota, but is refused once the quota is reached.
      config: { auth: true, quota: 'check' },
      schema: {
        operationId: 'publishArtifact',
        summary: 'Publish an artifact as a public page (upsert)',
        description:
          'Creates the page `{viewer}/a/<slug>` or updates its title, visibility and access; the slug is kept ' +
          'across re-publishes and unpublish/re-publish. Password access is Pro only and refused for HTML. ' +
          'A page an operator took down cannot be published again (403 `page_taken_down`).',
        tags: ['pages'],
        security,
        params: ArtifactIdParams,
        body: Type.Ref(PublishBody),
        response: {
          200: Type.Ref(PublishResult, { description: 'The page, created or updated.' }),
          ...artifactErrors,
          403: publishForbidden,
        },
      },
    },
    async (request) => core.pages.publish(callerOf(request), request.params.id, request.body),
  );

  app.delete(
    '/v1/artifacts/:id/publish',
    {
      // Never refused for quota: a tenant at its limit must still be able to take a page down.
      config: { auth: true, quota: 'skip' },
      schema: {
        operationId: 'unpublishArtifact',
        summary: 'Unpublish a page (idempotent)',
        description: "The id is the artifact id (`art_…`) or the page slug (`pg_…`), within the caller's tenant.",
        tags: ['pages'],
        security,
        params: Type.Object({ id: Type.String({ description: 'art_… or pg_…' }) }),
        response: {
          200: Type.Ref(UnpublishResult, { description: 'The page is offline (also when it already was).' }),
          ...artifactErrors,
          404: errorResponse('`artifact_not_found`: this tenant has no page for the id.'),
        },
      },
    },
    async (request) => core.pages.unpublish(callerOf(request), request.params.id),
  );

  app.get(
    '/v1/public/pages/:slug/gate-info',
    {
      config: { publicPage: true },
      schema: {
        operationId: 'getPageGateInfo',
        summary: 'Is this a live password page?',
        description: '200 only for a live page with access=password; everything else is the same 404.',
        tags: ['public pages'],
        params: SlugParams,
        response: {
          200: Type.Ref(GateInfo, { description: 'A live page behind a password.' }),
          ...publicErrors,
          404: errorResponse('`artifact_not_found`: not a live password page (whatever the reason).'),
        },
      },
    },
    async (request) => core.pages.gateInfo(request.params.slug),
  );

  app.post(
    '/v1/public/pages/:slug/unlock',
    {
      config: { publicPage: true },
      schema: {
        operationId: 'unlockPage',
        summary: 'Trade a page password for a content token',
        description:
          'The token (HS256 JWT, 300 s) goes to `{content}/c/<slug>?token=…`; it stops working at once when the ' +
          'page is re-published (new password hash) or goes offline. Attempts are capped per slug and per IP ' +
          'before any hashing.',
        tags: ['public pages'],
        params: SlugParams,
        body: Type.Ref(UnlockBody),
        response: {
          200: Type.Ref(UnlockResult, { description: 'The password is right: a token for the content origin.' }),
          400: errorResponse('`invalid_request`: a missing or empty password, or malformed JSON.'),
          401: errorResponse('`unauthorized`: wrong password.'),
          ...publicErrors,
          429: errorResponse(
            '`rate_limited`: over 10 attempts a minute for this page or 30 for this client; see `Retry-After`.',
          ),
        },
      },
    },
    async (request) => core.pages.unlock(request.params.slug, request.body, request.ip),
  );

  // Reports are always accepted: any body (even malformed, absent or too large) is read leniently.
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', async (_request: FastifyRequest, payload: Readable) => readReportBody(payload));
    scope.post(
      '/v1/public/pages/:slug/report',
      {
        config: { publicPage: true, anyBody: true },
        schema: {
          operationId: 'reportPage',
          summary: 'Report a page to the operators',
          description:
            'Always 202, whether or not the page exists, whatever the body (malformed, absent, over 64 KiB); 429 ' +
            'only past 5 reports an hour from one IP about one page. `reason` is one of spam, phishing, malware, ' +
            'abuse, copyright, other (anything else is stored as other); `detail` is cut at 2,000 characters. ' +
            'Only reports about live pages, at most 20 an hour per IP, are forwarded to the operators.',
          tags: ['public pages'],
          params: SlugParams,
          body: Type.Ref(ReportBody),
          response: {
            202: Type.Ref(ReportReceipt, { description: 'Received (always, whatever the slug or body).' }),
            429: errorResponse('`rate_limited`: over 5 reports an hour from this client about this page.'),
          },
        },
        validatorCompiler: () => (data: unknown) => ({ value: data }),
      },
      async (request, reply) => {
        reply.status(202);
        // Too large to be a real report: answered like any other, forwarded nowhere.
        if (isOversized(request.body)) return { received: true as const };
        return core.pages.report(request.params.slug, request.body, request.ip);
      },
    );
  });
}
