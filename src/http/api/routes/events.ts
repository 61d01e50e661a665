import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { parseEventQuery, parsePosition } from '../../../core/events.js';
import type { Core } from '../../../core/index.js';
import { bearerToken, callerOf } from '../../auth.js';
import { EventStream } from '../event-stream.js';
import { authErrors, EventList, errorResponse, ListEventsQuery, StreamEventsQuery } from '../schemas.js';

const security = [{ bearer: [] }];

export interface EventRouteOptions {
  /** Milliseconds between a stream's heartbeats (CAIRN_EVENT_HEARTBEAT_SECONDS). */
  heartbeatMs: number;
}

export function eventRoutes(instance: FastifyInstance, core: Core, opts: EventRouteOptions): void {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/v1/events',
    {
      config: { auth: true },
      schema: {
        operationId: 'listEvents',
        summary: 'List events (the change feed)',
        description:
          'What changed in this account, oldest first: artifacts created, deleted, expired and purged, sessions ' +
          'sealed, pages published, updated, unpublished and taken down, links created and revoked. Each event ' +
          'carries the record it concerns as the API returns it. Pass the last `event_id` seen as `after` to get ' +
          'only newer ones; `next_cursor` pages within one call’s results. Events are kept 7 days.',
        tags: ['events'],
        security,
        querystring: ListEventsQuery,
        response: {
          200: Type.Ref(EventList, { description: 'A page of events, oldest first.' }),
          ...authErrors,
        },
      },
    },
    async (request) => core.events.list(callerOf(request), request.query),
  );

  app.get(
    '/v1/events/stream',
    {
      config: { auth: true },
      schema: {
        operationId: 'streamEvents',
        summary: 'Follow events (Server-Sent Events)',
        description:
          '`text/event-stream`: each event as `id: <event_id>`, `event: <type>`, `data: <the Event as JSON>`, a ' +
          '`: heartbeat` comment every 15 s between. Starts after the `Last-Event-ID` header (what an EventSource ' +
          'sends when it reconnects) or `after`, else with the events made from now on. Counts as one request ' +
          'when opened; a few streams per account per server (429 beyond).',
        tags: ['events'],
        security,
        querystring: StreamEventsQuery,
        response: {
          200: {
            description: 'The stream.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...authErrors,
          429: errorResponse('`rate_limited`: over the rate limit, or too many streams open for this account.'),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const bearer = bearerToken(request);
      const { filter } = parseEventQuery({ ...request.query });
      // HEAD (which Fastify routes here too) gets the stream's headers and no stream.
      if (request.method === 'HEAD')
        return reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-store').send();
      const resume = request.headers['last-event-id'];
      if (typeof resume === 'string' && resume !== '') filter.after = parsePosition(resume, 'Last-Event-ID');
      const head = await core.events.head(caller.tenant.id);
      if (filter.after === 0 && resume === undefined && request.query.after === undefined) filter.after = head;
      const stream = new EventStream(
        core,
        reply.raw,
        {
          caller,
          stillAllowed: () =>
            core.tenants.authenticate(bearer).then(
              () => true,
              () => false,
            ),
          filter,
          heartbeatMs: opts.heartbeatMs,
        },
        head,
      );
      stream.follow();
      stream.startOn(reply);
    },
  );
}
