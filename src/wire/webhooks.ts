import { type Static, Type } from '@sinclair/typebox';
import { EVENT_TYPES } from '../shared/event-types.js';
import { NullableOut, OneOfStrings, Pagination, Timestamp } from './common.js';

const EventTypeName = Type.Union(
  EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: 'An event type.' },
);

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({
      maxLength: 2048,
      description: 'Where to POST each event: https (or http). Private, loopback and link-local addresses are refused.',
      examples: ['https://example.com/hooks/cairn'],
    }),
    types: Type.Optional(
      Type.Array(EventTypeName, {
        minItems: 1,
        maxItems: EVENT_TYPES.length,
        description: 'Only these types; default all.',
      }),
    ),
    session_id: Type.Optional(Type.String({ description: 'Only events of this session.' })),
  },
  { $id: 'CreateWebhookRequest', additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

const webhookFields = {
  webhook_id: Type.String({ pattern: '^wh_[A-Za-z0-9]{16}$' }),
  url: Type.String(),
  types: NullableOut(Type.Array(OneOfStrings([...EVENT_TYPES]), { description: 'null: every type.' })),
  session_id: NullableOut(Type.String()),
  status: OneOfStrings(['active', 'disabled']),
  created_at: Timestamp,
  disabled_at: NullableOut(Timestamp),
  failing_since: NullableOut(Timestamp),
  last_event_id: NullableOut(
    Type.String({ description: 'The last event delivered (or passed over by the filters); null before the first.' }),
  ),
};

export const WebhookRecord = Type.Object(webhookFields, { $id: 'Webhook' });
export type WebhookRecord = Static<typeof WebhookRecord>;

export const WebhookCreated = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({ description: 'The signing secret (`whsec_…`), shown only now: verify deliveries with it.' }),
  },
  { $id: 'WebhookCreated' },
);
export type WebhookCreated = Static<typeof WebhookCreated>;

export const WebhookList = Type.Intersect(
  [
    Type.Ref(Pagination),
    Type.Object({ webhooks: Type.Array(Type.Ref(WebhookRecord), { description: 'Oldest first.' }) }),
  ],
  { $id: 'WebhookList' },
);
export type WebhookList = Static<typeof WebhookList>;

export const WebhookSecret = Type.Object(
  {
    webhook_id: Type.String(),
    secret: Type.String({ description: 'The new secret; the old one keeps signing beside it for 24 hours.' }),
  },
  { $id: 'WebhookSecret' },
);
export type WebhookSecret = Static<typeof WebhookSecret>;

export const DeleteWebhookResult = Type.Object(
  { webhook_id: Type.String(), deleted: Type.Literal(true) },
  { $id: 'DeleteWebhookResult' },
);
export type DeleteWebhookResult = Static<typeof DeleteWebhookResult>;

export const DeliveryRecord = Type.Object(
  {
    delivery_id: Type.String(),
    event_id: Type.String(),
    event_type: OneOfStrings([...EVENT_TYPES]),
    attempt: Type.Integer({ description: '1 for the first try of this event.' }),
    delivered: Type.Boolean({ description: 'Whether the receiver answered 2xx.' }),
    status_code: NullableOut(Type.Integer({ description: 'The receiver’s status; null when none came.' })),
    error: NullableOut(Type.String()),
    duration_ms: Type.Integer(),
    created_at: Timestamp,
  },
  { $id: 'WebhookDelivery' },
);
export type DeliveryRecord = Static<typeof DeliveryRecord>;

export const DeliveryList = Type.Intersect(
  [
    Type.Ref(Pagination),
    Type.Object({ deliveries: Type.Array(Type.Ref(DeliveryRecord), { description: 'Newest first.' }) }),
  ],
  { $id: 'WebhookDeliveryList' },
);
export type DeliveryList = Static<typeof DeliveryList>;
