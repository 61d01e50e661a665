import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CairnClient } from 'cairn-store-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApiApp } from '../../src/http/api/app.js';
import { type CoreHarness, coreHarness } from './harness.js';

/**
 * Every operation of the API reaches users of both SDKs: each `operationId` of the OpenAPI
 * document maps to a method of the TypeScript `CairnClient` and of the Python `Cairn`, or is
 * named here as served to other clients only, with the reason. A new operation fails this test
 * until both SDKs have it (or it is listed).
 */
const SDK_METHODS: Record<string, { ts: string; py: string } | { serverOnly: string }> = {
  getHealth: { ts: 'health', py: 'health' },
  getWhoami: { ts: 'whoami', py: 'whoami' },
  uploadArtifact: { ts: 'uploadFile', py: 'push' },
  listArtifacts: { ts: 'listArtifacts', py: 'list' },
  getArtifact: { ts: 'getArtifact', py: 'get' },
  deleteArtifact: { ts: 'deleteArtifact', py: 'delete' },
  getDownloadUrl: { ts: 'getDownloadUrl', py: 'download_url' },
  getDownloadUrls: { ts: 'downloadUrls', py: 'download_urls' },
  createLink: { ts: 'createLink', py: 'create_link' },
  listLinks: { ts: 'listLinks', py: 'links' },
  revokeLink: { ts: 'revokeLink', py: 'revoke_link' },
  requestUploadUrl: { ts: 'requestUploadUrl', py: 'request_upload_url' },
  putUpload: { ts: 'putUpload', py: 'upload_to_ticket' },
  completeUpload: { ts: 'completeUpload', py: 'complete_upload' },
  listSessions: { ts: 'listSessions', py: 'sessions' },
  sealSession: { ts: 'sealSession', py: 'seal' },
  getSessionArchive: { ts: 'getSessionArchiveUrl', py: 'session_archive_url' },
  getArtifactsArchive: { ts: 'getArchiveUrl', py: 'archive_url' },
  createSessionLink: { ts: 'createSessionLink', py: 'create_session_link' },
  listSessionLinks: { ts: 'listSessionLinks', py: 'session_links' },
  publishArtifact: { ts: 'publish', py: 'publish' },
  unpublishArtifact: { ts: 'unpublish', py: 'unpublish' },
  getPageGateInfo: { ts: 'gateInfo', py: 'page_gate_info' },
  unlockPage: { ts: 'unlock', py: 'unlock_page' },
  reportPage: { ts: 'report', py: 'report_page' },
  getResumableUploadOptions: { ts: 'resumableUploadSupport', py: 'resumable_upload_support' },
  // One SDK call speaks the three requests of a resumable upload (and resumes with them).
  createResumableUpload: { ts: 'uploadResumable', py: 'push_resumable' },
  getResumableUploadOffset: { ts: 'uploadResumable', py: 'push_resumable' },
  appendToResumableUpload: { ts: 'uploadResumable', py: 'push_resumable' },
  terminateResumableUpload: { ts: 'terminateResumableUpload', py: 'terminate_resumable_upload' },
  listEvents: { ts: 'listEvents', py: 'list_events' },
  // The stream, followed with reconnects and Last-Event-ID.
  streamEvents: { ts: 'followEvents', py: 'follow_events' },
  createWebhook: { ts: 'createWebhook', py: 'create_webhook' },
  listWebhooks: { ts: 'listWebhooks', py: 'list_webhooks' },
  getWebhook: { ts: 'getWebhook', py: 'get_webhook' },
  deleteWebhook: { ts: 'deleteWebhook', py: 'delete_webhook' },
  rotateWebhookSecret: { ts: 'rotateWebhookSecret', py: 'rotate_webhook_secret' },
  enableWebhook: { ts: 'enableWebhook', py: 'enable_webhook' },
  listWebhookDeliveries: { ts: 'listWebhookDeliveries', py: 'webhook_deliveries' },
};

const ROOT = path.resolve(import.meta.dirname, '../..');

let h: CoreHarness;
let operationIds: string[];
let pythonMethods: Set<string>;

beforeAll(async () => {
  h = await coreHarness();
  const app = await buildApiApp(h.core, { logLevel: 'silent' });
  const doc = (await app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  await app.close();
  operationIds = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId ?? '?'));
  // The public methods of `class Cairn` in the Python package (4-space indented defs).
  const py = await readFile(path.join(ROOT, 'python/cairn/client.py'), 'utf8');
  const body = py.slice(py.indexOf('\nclass Cairn'));
  pythonMethods = new Set([...body.matchAll(/^ {4}def ([a-z]\w*)\(/gm)].map((m) => m[1] as string));
});
afterAll(async () => {
  await h?.close();
});

describe('SDK parity with the OpenAPI document', () => {
  it('lists every operation, and only operations the document has', () => {
    expect(operationIds.length).toBeGreaterThan(20);
    expect([...operationIds].sort()).toEqual(Object.keys(SDK_METHODS).sort());
  });

  it.each(Object.entries(SDK_METHODS))('%s has its TypeScript and Python method', (_id, entry) => {
    if ('serverOnly' in entry) return;
    expect(typeof (CairnClient.prototype as unknown as Record<string, unknown>)[entry.ts]).toBe('function');
    expect(pythonMethods.has(entry.py), `Cairn.${entry.py} in python/cairn/client.py`).toBe(true);
  });
});
