import { type Static, Type } from '@sinclair/typebox';
import { EVENT_TYPES } from '../shared/event-types.js';
import { ArtifactRecord } from './artifacts.js';
import { NullableOut, OneOfStrings, Pagination, Timestamp } from './common.js';
import { SessionRecord } from './sessions.js';
import { LinkRecord, SessionLinkRecord } from './sharing.js';

/** A page as its events show it: what a publish answers, with its artifact and state. */
export const PageState = Type.Object(
  {
    page_id: Type.String({ pattern: '^pg_[A-Za-z0-9]{16}$' }),
    artifact_id: Type.String(),
    public_url: Type.String(),
    visibility: OneOfStrings(['unlisted', 'public']),
    access: OneOfStrings(['none', 'password']),
    title: NullableOut(Type.String()),
    live: Type.Boolean({ description: 'Whether the page is served now.' }),
    taken_down: Type.Boolean({ description: 'Whether an operator took it down.' }),
  },
  { $id: 'PageState' },
);
export type PageState = Static<typeof PageState>;

/** What a `webhook.disabled` event carries. */
export const WebhookDisabled = Type.Object(
  {
    webhook_id: Type.String(),
    url: Type.String(),
    disabled_at: Timestamp,
    reason: Type.String(),
  },
  { $id: 'WebhookDisabled' },
);
export type WebhookDisabled = Static<typeof WebhookDisabled>;

export const EventRecord = Type.Object(
  {
    event_id: Type.String({
      pattern: '^evt_[0-9]{16}$',
      description: "The event's position in this account's feed: ids sort in the order the changes were made.",
    }),
    type: OneOfStrings([...EVENT_TYPES]),
    created_at: Timestamp,
    data: Type.Union(
      [
        Type.Ref(ArtifactRecord),
        Type.Ref(SessionRecord),
        Type.Ref(PageState),
        Type.Ref(LinkRecord),
        Type.Ref(SessionLinkRecord),
        Type.Ref(WebhookDisabled),
      ],
      {
        description:
          'The record the event concerns as it was after the change: an Artifact (artifact.*), a Session ' +
          '(session.sealed), a PageState (page.*), a Link (link.*), a SessionLink with its session_id (session_link.*), a WebhookDisabled (webhook.disabled).',
      },
    ),
  },
  { $id: 'Event' },
);
export type EventRecord = Static<typeof EventRecord>;

export const EventList = Type.Intersect(
  [Type.Ref(Pagination), Type.Object({ events: Type.Array(Type.Ref(EventRecord), { description: 'Oldest first.' }) })],
  { $id: 'EventList' },
);
export type EventList = Static<typeof EventList>;
