import type { TSchema } from '@sinclair/typebox';
import { Health, WhoAmI } from './account.js';
import { ArchiveUrl } from './archives.js';
import {
  ArtifactList,
  ArtifactRecord,
  DeleteResult,
  JsonUploadBody,
  MultipartUploadBody,
  UploadReceipt,
  UploadTicket,
  UploadUrlBody,
} from './artifacts.js';
import { ErrorEnvelope, Pagination } from './common.js';
import { EventList, EventRecord, PageState, WebhookDisabled } from './events.js';
import {
  GateInfo,
  PublishBody,
  PublishResult,
  ReportBody,
  ReportReceipt,
  UnlockBody,
  UnlockResult,
  UnpublishResult,
} from './pages.js';
import { SealResult, SessionList, SessionRecord } from './sessions.js';
import {
  BatchDownloadUrls,
  BatchDownloadUrlsBody,
  CreateLinkBody,
  DownloadUrl,
  LinkList,
  LinkRecord,
  ListedLink,
  RevokeLinkResult,
  SessionLinkList,
  SessionLinkRecord,
} from './sharing.js';
import {
  CreateWebhookBody,
  DeleteWebhookResult,
  DeliveryList,
  DeliveryRecord,
  WebhookCreated,
  WebhookList,
  WebhookRecord,
  WebhookSecret,
} from './webhooks.js';

export * from './account.js';
export * from './archives.js';
export * from './artifacts.js';
export * from './common.js';
export * from './events.js';
export * from './pages.js';
export * from './sessions.js';
export * from './sharing.js';
export * from './webhooks.js';

/** The named request shapes: the ones a route validator may meet behind a `Type.Ref`. */
export const requestComponents: TSchema[] = [
  JsonUploadBody,
  MultipartUploadBody,
  UploadUrlBody,
  CreateLinkBody,
  BatchDownloadUrlsBody,
  PublishBody,
  UnlockBody,
  ReportBody,
  CreateWebhookBody,
];

/** Every named component: registered once on the API app, listed in the OpenAPI document (in this order). */
export const components: TSchema[] = [
  ErrorEnvelope,
  Pagination,
  ArtifactRecord,
  ArtifactList,
  SessionRecord,
  SessionList,
  ...requestComponents,
  UploadTicket,
  UploadReceipt,
  DownloadUrl,
  BatchDownloadUrls,
  ArchiveUrl,
  LinkRecord,
  ListedLink,
  LinkList,
  SessionLinkRecord,
  SessionLinkList,
  RevokeLinkResult,
  DeleteResult,
  SealResult,
  PublishResult,
  UnpublishResult,
  GateInfo,
  UnlockResult,
  ReportReceipt,
  WhoAmI,
  Health,
  PageState,
  WebhookDisabled,
  EventRecord,
  EventList,
  WebhookRecord,
  WebhookCreated,
  WebhookList,
  WebhookSecret,
  DeleteWebhookResult,
  DeliveryRecord,
  DeliveryList,
];
