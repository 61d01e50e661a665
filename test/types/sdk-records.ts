/**
 * The SDK package declares the API's records as plain types (packages/sdk/src/records.ts) so that
 * it needs no TypeBox; the server declares them as the schemas that validate and document them
 * (src/wire). `npm run typecheck` compiles this file: each pair must be the same type both ways,
 * so a field added, dropped or retyped on one side alone fails the check.
 */
import type { Static } from '@sinclair/typebox';
import type * as sdk from '../../packages/sdk/src/records.js';
import type * as wire from '../../src/wire/index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Check<T extends true> = T;

export type SdkRecordsMatchTheWire = [
  Check<Same<sdk.Pagination, Static<typeof wire.Pagination>>>,
  Check<Same<sdk.PageSummary | null, Static<typeof wire.PageSummary>>>,
  Check<Same<sdk.ArtifactRecord, Static<typeof wire.ArtifactRecord>>>,
  Check<Same<sdk.ArtifactList, Static<typeof wire.ArtifactList>>>,
  Check<Same<sdk.DeleteResult, Static<typeof wire.DeleteResult>>>,
  Check<Same<sdk.UploadTicket, Static<typeof wire.UploadTicket>>>,
  Check<Same<sdk.SessionRecord, Static<typeof wire.SessionRecord>>>,
  Check<Same<sdk.SessionList, Static<typeof wire.SessionList>>>,
  Check<Same<sdk.SealResult, Static<typeof wire.SealResult>>>,
  Check<Same<sdk.DownloadUrl, Static<typeof wire.DownloadUrl>>>,
  Check<Same<sdk.BatchDownloadUrls, Static<typeof wire.BatchDownloadUrls>>>,
  Check<Same<sdk.LinkRecord, Static<typeof wire.LinkRecord>>>,
  Check<Same<sdk.ListedLink, Static<typeof wire.ListedLink>>>,
  Check<Same<sdk.LinkList, Static<typeof wire.LinkList>>>,
  Check<Same<sdk.RevokeLinkResult, Static<typeof wire.RevokeLinkResult>>>,
  Check<Same<sdk.PublishResult, Static<typeof wire.PublishResult>>>,
  Check<Same<sdk.UnpublishResult, Static<typeof wire.UnpublishResult>>>,
  Check<Same<sdk.GateInfo, Static<typeof wire.GateInfo>>>,
  Check<Same<sdk.UnlockResult, Static<typeof wire.UnlockResult>>>,
  Check<Same<sdk.WhoAmI, Static<typeof wire.WhoAmI>>>,
  Check<Same<sdk.PageState, Static<typeof wire.PageState>>>,
  Check<Same<sdk.WebhookDisabled, Static<typeof wire.WebhookDisabled>>>,
  Check<Same<sdk.EventRecord, Static<typeof wire.EventRecord>>>,
  Check<Same<sdk.EventList, Static<typeof wire.EventList>>>,
  Check<Same<sdk.WebhookRecord, Static<typeof wire.WebhookRecord>>>,
  Check<Same<sdk.WebhookCreated, Static<typeof wire.WebhookCreated>>>,
  Check<Same<sdk.WebhookList, Static<typeof wire.WebhookList>>>,
  Check<Same<sdk.WebhookSecret, Static<typeof wire.WebhookSecret>>>,
  Check<Same<sdk.DeleteWebhookResult, Static<typeof wire.DeleteWebhookResult>>>,
  Check<Same<sdk.DeliveryRecord, Static<typeof wire.DeliveryRecord>>>,
  Check<Same<sdk.DeliveryList, Static<typeof wire.DeliveryList>>>,
];
