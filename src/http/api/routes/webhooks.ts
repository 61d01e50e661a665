import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Core } from '../../../core/index.js';
import { callerOf } from '../../auth.js';
import {
  authErrors,
  CreateWebhookBody,
  DeleteWebhookResult,
  DeliveryList,
  errorResponse,
  WebhookCreated,
  WebhookList,
  WebhookRecord,
  WebhookSecret,
} from '../schemas.js';

const security = [{ bearer: [] }];
const IdParams = Type.Object({ id: Type.String({ description: 'A webhook id, wh_…' }) });
const PageQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ description: 'The `next_cursor` of the previous page.' })),
    limit: Type.Optional(Type.String({ description: 'Page size, 1-200, default 50.' })),
  },
  { additionalProperties: false },
);
const notFound = { 404: errorResponse('`not_found`: no such webhook in your account.') };

export function webhookRoutes(instance: FastifyInstance, core: Core): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['webhooks'];

  app.post(
    '/v1/webhooks',
    {
      config: { auth: true },
      schema: {
        operationId: 'createWebhook',
        summary: 'Create a webhook',
        description:
          'Each event after now that matches `types` and `session_id` is POSTed to `url`, signed as the Standard ' +
          'Webhooks specification says (`webhook-id`, `webhook-timestamp`, `webhook-signature` with the returned ' +
          '`secret`), in order, retried with backoff for 24 hours. Free 2, Pro 20 webhooks.',
        tags,
        security,
        body: Type.Ref(CreateWebhookBody),
        response: {
          201: Type.Ref(WebhookCreated, { description: 'Created; the secret is shown only now.' }),
          ...authErrors,
        },
      },
    },
    async (request, reply) => reply.code(201).send(await core.webhooks.create(callerOf(request), request.body)),
  );

  app.get(
    '/v1/webhooks',
    {
      config: { auth: true },
      schema: {
        operationId: 'listWebhooks',
        summary: 'List webhooks',
        description: 'This account’s webhooks, oldest first, keyset-paginated; secrets are never listed.',
        tags,
        security,
        querystring: PageQuery,
        response: { 200: Type.Ref(WebhookList, { description: 'Oldest first.' }), ...authErrors },
      },
    },
    async (request) => core.webhooks.list(callerOf(request), request.query),
  );

  app.get(
    '/v1/webhooks/:id',
    {
      config: { auth: true },
      schema: {
        operationId: 'getWebhook',
        summary: 'Get a webhook',
        description: 'Its state: active or disabled, failing since when, the last event delivered.',
        tags,
        security,
        params: IdParams,
        response: { 200: Type.Ref(WebhookRecord, { description: 'The webhook.' }), ...notFound, ...authErrors },
      },
    },
    async (request) => core.webhooks.get(callerOf(request), request.params.id),
  );

  app.delete(
    '/v1/webhooks/:id',
    {
      config: { auth: true },
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook',
        description: 'No more deliveries; its delivery log goes with it.',
        tags,
        security,
        params: IdParams,
        response: { 200: Type.Ref(DeleteWebhookResult, { description: 'Deleted.' }), ...notFound, ...authErrors },
      },
    },
    async (request) => core.webhooks.delete(callerOf(request), request.params.id),
  );

  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      config: { auth: true },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate a webhook’s secret',
        description: 'Deliveries carry a signature with the new secret and, for 24 hours, one with the old.',
        tags,
        security,
        params: IdParams,
        response: { 200: Type.Ref(WebhookSecret, { description: 'The new secret.' }), ...notFound, ...authErrors },
      },
    },
    async (request) => core.webhooks.rotateSecret(callerOf(request), request.params.id),
  );

  app.post(
    '/v1/webhooks/:id/enable',
    {
      config: { auth: true },
      schema: {
        operationId: 'enableWebhook',
        summary: 'Enable a disabled webhook',
        description: 'Delivery resumes from the first event it did not deliver, if still kept (7 days).',
        tags,
        security,
        params: IdParams,
        response: { 200: Type.Ref(WebhookRecord, { description: 'Active again.' }), ...notFound, ...authErrors },
      },
    },
    async (request) => core.webhooks.enable(callerOf(request), request.params.id),
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      config: { auth: true },
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List a webhook’s delivery attempts',
        description:
          'Each attempt: the event, its number, whether it was delivered, the status and time it took; kept 7 days.',
        tags,
        security,
        params: IdParams,
        querystring: PageQuery,
        response: { 200: Type.Ref(DeliveryList, { description: 'Newest first.' }), ...notFound, ...authErrors },
      },
    },
    async (request) => core.webhooks.deliveries(callerOf(request), request.params.id, request.query),
  );
}
