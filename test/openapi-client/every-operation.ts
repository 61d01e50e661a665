/**
 * A client generated from the served OpenAPI document, used the way an outside developer would:
 * types from `openapi-typescript`, calls through `openapi-fetch`. test/e2e/openapi-client.test.ts
 * writes `cairn-api.ts` next to a copy of this file, type-checks both with `tsc --strict`, and then
 * runs `callEveryOperation` against a live server. So the document must name every operation
 * (the `Record<keyof operations, …>` below has a key for each operationId, no more, no less), and
 * the fields used here and the SDK's record types must still fit what the document says.
 */
import createClient from 'openapi-fetch';
import type * as Sdk from '../../packages/sdk/src/types.js';
import type { components, operations, paths } from './cairn-api.js';

type Schemas = components['schemas'];

// Each response shape the document names fits the TypeScript SDK's type for it.
export const fitsSdk = {
  artifact: (x: Schemas['Artifact']): Sdk.ArtifactRecord => x,
  artifactList: (x: Schemas['ArtifactList']): Sdk.ArtifactList => x,
  session: (x: Schemas['Session']): Sdk.SessionRecord => x,
  sessionList: (x: Schemas['SessionList']): Sdk.SessionList => x,
  whoami: (x: Schemas['WhoAmI']): Sdk.WhoAmI => x,
  downloadUrl: (x: Schemas['DownloadUrl']): Sdk.DownloadUrl => x,
  link: (x: Schemas['Link']): Sdk.LinkRecord => x,
  deleted: (x: Schemas['DeleteResult']): Sdk.DeleteResult => x,
  sealed: (x: Schemas['SealResult']): Sdk.SealResult => x,
  ticket: (x: Schemas['UploadTicket']): Sdk.UploadTicket => x,
  published: (x: Schemas['PublishResult']): Sdk.PublishResult => x,
  unpublished: (x: Schemas['UnpublishResult']): Sdk.UnpublishResult => x,
  gateInfo: (x: Schemas['GateInfo']): Sdk.GateInfo => x,
  unlocked: (x: Schemas['UnlockResult']): Sdk.UnlockResult => x,
  event: (x: Schemas['Event']): Sdk.EventRecord => x,
  eventList: (x: Schemas['EventList']): Sdk.EventList => x,
  error: (x: Schemas['ErrorEnvelope']): { error: { code: string; message: string; status: number } } => x,
};

/** What a call answered: the HTTP status, and the data the test checks. */
export interface Outcome {
  status: number;
  detail?: unknown;
}

function fail(what: string, error: unknown): never {
  throw new Error(`${what}: ${JSON.stringify(error)}`);
}

/**
 * Calls every operation once, in an order that lets each use what the earlier ones made, and
 * returns each one's outcome by operationId. The key must be a Pro tenant's (presigned uploads
 * and password pages are Pro features).
 */
export async function callEveryOperation(baseUrl: string, apiKey: string): Promise<Record<keyof operations, Outcome>> {
  const cairn = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } });
  const anonymous = createClient<paths>({ baseUrl });

  const health = await anonymous.GET('/health');
  const whoami = await cairn.GET('/v1/whoami');
  if (!whoami.data) fail('whoami', whoami.error);
  const plan: 'free' | 'pro' = whoami.data.plan;

  const note = await cairn.POST('/v1/artifacts', {
    body: {
      filename: 'notes.md',
      content: Buffer.from('# Notes\n').toString('base64'),
      content_type: 'text/markdown',
      session_id: 'openapi-run',
      metadata: { kind: 'report' },
    },
    headers: { 'idempotency-key': 'openapi-notes' },
  });
  if (!note.data) fail('uploadArtifact (JSON)', note.error);
  const id: string = note.data.artifact_id;

  // The multipart form of the same operation: the document's field names, sent as a form.
  const form = await cairn.POST('/v1/artifacts', {
    body: { file: 'multipart bytes', filename: 'form.txt', session_id: 'openapi-run' },
    bodySerializer(body) {
      const fd = new FormData();
      if ('file' in body) {
        if (body.filename !== undefined) fd.append('filename', body.filename);
        if (body.session_id !== undefined) fd.append('session_id', body.session_id);
        fd.append('file', new Blob([body.file]), 'form.txt');
      }
      return fd;
    },
  });
  if (!form.data) fail('uploadArtifact (multipart)', form.error);

  // `metadata.<key>` is not a named parameter (see the operation's description): it goes into
  // the query string next to the typed ones.
  const list = await cairn.GET('/v1/artifacts', {
    params: { query: { limit: 10, session_id: 'openapi-run' } },
    querySerializer: (query) =>
      `${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}&metadata.kind=report`,
  });
  if (!list.data) fail('listArtifacts', list.error);
  const listed: string[] = list.data.artifacts.map((a) => a.artifact_id);
  const hasMore: boolean = list.data.has_more;

  const got = await cairn.GET('/v1/artifacts/{id}', { params: { path: { id } } });
  const page: { public_url: string } | null | undefined = got.data?.page;
  const download = await cairn.GET('/v1/artifacts/{id}/download-url', { params: { path: { id } } });
  const downloadUrl: string | undefined = download.data?.download_url;
  const batch = await cairn.POST('/v1/artifacts/batch/download-urls', { body: { artifact_ids: [id, id] } });
  const batchCount: number | undefined = batch.data?.download_urls.length;
  // The body is optional (the default lifetime then applies).
  const link = await cairn.POST('/v1/artifacts/{id}/links', { params: { path: { id } } });
  const shortLink = await cairn.POST('/v1/artifacts/{id}/links', {
    params: { path: { id } },
    body: { expires_in: 60 },
  });
  // The lifetime as a duration (typed by the document's `ttl`), after the list is read.
  const linkId: string | undefined = link.data?.link_id;
  const links = await cairn.GET('/v1/artifacts/{id}/links', { params: { path: { id }, query: { limit: 10 } } });
  const linkCount: number | undefined = links.data?.links.length;
  const shortId = shortLink.data?.link_id ?? 'lnk_00000000000000000000';
  const dayLink = await cairn.POST('/v1/artifacts/{id}/links', { params: { path: { id } }, body: { ttl: '1d' } });
  const dayLinkSeconds =
    dayLink.data && (Date.parse(dayLink.data.expires_at) - Date.parse(dayLink.data.created_at)) / 1000;
  const revoked = await cairn.DELETE('/v1/links/{link_id}', { params: { path: { link_id: shortId } } });

  const sessions = await cairn.GET('/v1/sessions', { params: { query: { limit: 5 } } });
  const sessionCounts = sessions.data?.sessions.map((s) => [s.session_id, s.artifact_count] as const);

  const ticket = await cairn.POST('/v1/artifacts/upload-url', {
    body: { filename: 'big.bin', size_bytes: 5, session_id: 'openapi-run' },
  });
  if (!ticket.data) fail('requestUploadUrl', ticket.error);
  // The local blob folder cannot sign URLs, so the ticket points at Cairn's own PUT operation.
  const target = new URL(ticket.data.upload_url);
  const put = await anonymous.PUT('/v1/uploads/{id}', {
    params: {
      path: { id: ticket.data.artifact_id },
      query: { exp: target.searchParams.get('exp') ?? '', sig: target.searchParams.get('sig') ?? '' },
    },
    body: 'bytes',
    bodySerializer: (body) => body,
    headers: { 'content-type': 'application/octet-stream', ...ticket.data.upload_headers },
  });
  const complete = await cairn.POST('/v1/artifacts/{id}/complete', {
    params: { path: { id: ticket.data.artifact_id } },
  });
  const completedSize: number | undefined = complete.data?.size_bytes;

  // A resumable (tus) upload in two pieces, with a HEAD between them, and one abandoned.
  const tus = { 'tus-resumable': '1.0.0' as const };
  const tusOptions = await anonymous.OPTIONS('/v1/uploads/tus');
  const startUpload = (length: number) =>
    cairn.POST('/v1/uploads/tus', {
      params: {
        header: { ...tus, 'upload-length': String(length), 'upload-metadata': `filename ${btoa('resumed.txt')}` },
      },
    });
  const created = await startUpload(11);
  const uploadId = created.response.headers.get('location')?.split('/').pop() ?? '';
  const sendPiece = (offset: string, bytes: string) =>
    cairn.PATCH('/v1/uploads/tus/{id}', {
      params: { path: { id: uploadId }, header: { ...tus, 'upload-offset': offset } },
      body: bytes,
      bodySerializer: (body) => body,
      headers: { 'content-type': 'application/offset+octet-stream' },
    });
  const firstPiece = await sendPiece('0', 'resumed');
  const head = await cairn.HEAD('/v1/uploads/tus/{id}', { params: { path: { id: uploadId }, header: tus } });
  const offset = head.response.headers.get('upload-offset') ?? '';
  const lastPiece = await sendPiece(offset, ' ok!');
  const resumed = await cairn.GET('/v1/artifacts/{id}', { params: { path: { id: uploadId } } });
  const abandonedId = (await startUpload(5)).response.headers.get('location')?.split('/').pop() ?? '';
  const terminated = await cairn.DELETE('/v1/uploads/tus/{id}', { params: { path: { id: abandonedId }, header: tus } });
  const afterwards = await cairn.HEAD('/v1/uploads/tus/{id}', { params: { path: { id: abandonedId }, header: tus } });

  const published = await cairn.POST('/v1/artifacts/{id}/publish', {
    params: { path: { id } },
    body: { visibility: 'unlisted', access: 'password', password: 'open sesame', title: 'Notes' },
  });
  if (!published.data) fail('publishArtifact', published.error);
  const slug: string = published.data.page_id;
  const gate = await anonymous.GET('/v1/public/pages/{slug}/gate-info', { params: { path: { slug } } });
  const access: 'password' | undefined = gate.data?.access;
  const unlock = await anonymous.POST('/v1/public/pages/{slug}/unlock', {
    params: { path: { slug } },
    body: { password: 'open sesame' },
  });
  const tokenSeconds: number | undefined = unlock.data?.expires_in;
  const report = await anonymous.POST('/v1/public/pages/{slug}/report', {
    params: { path: { slug } },
    body: { reason: 'other', detail: 'generated client test' },
  });
  const unpublished = await cairn.DELETE('/v1/artifacts/{id}/publish', { params: { path: { id: slug } } });

  const deleted = await cairn.DELETE('/v1/artifacts/{id}', { params: { path: { id } } });
  const deletedAt: string | undefined = deleted.data?.deleted_at;
  const again = await cairn.DELETE('/v1/artifacts/{id}', { params: { path: { id } } });
  const goneCode: string | undefined = again.error?.error.code;
  const sealed = await cairn.POST('/v1/sessions/{id}/seal', { params: { path: { id: 'openapi-run' } } });
  // The archive calls answer 303 See Other; not followed, so the signed URL is read from Location.
  const archive = await cairn.GET('/v1/sessions/{id}/archive', {
    params: { path: { id: 'openapi-run' }, query: { format: 'zip' } },
    redirect: 'manual',
  });
  const listArchive = await cairn.GET('/v1/artifacts/archive', {
    params: { query: { session_id: 'openapi-run', format: 'tar.gz' } },
    redirect: 'manual',
  });
  const signedArchive = (r: { response: Response }) => r.response.headers.get('location')?.includes('/z/') ?? false;
  const sessionLink = await cairn.POST('/v1/sessions/{id}/links', {
    params: { path: { id: 'openapi-run' } },
    body: { ttl: '1d' },
  });
  const sessionLinkId: string | undefined = sessionLink.data?.link_id;
  const sessionLinks = await cairn.GET('/v1/sessions/{id}/links', { params: { path: { id: 'openapi-run' } } });

  // The change feed: the list, then a stream from the start, read until its first event.
  const events = await cairn.GET('/v1/events', { params: { query: { types: 'session.sealed' } } });
  const sealedEvent: string | undefined = events.data?.events[0]?.type;
  const abort = new AbortController();
  const stream = await cairn.GET('/v1/events/stream', {
    params: { query: { after: '0', types: 'artifact.deleted' } },
    parseAs: 'stream',
    signal: abort.signal,
  });
  let firstStreamed = '';
  const reader = (stream.data as ReadableStream<Uint8Array> | undefined)?.getReader();
  while (reader && !firstStreamed.includes('\n\n', firstStreamed.indexOf('data:'))) {
    const { value, done } = await reader.read();
    if (done) break;
    firstStreamed += new TextDecoder().decode(value);
  }
  abort.abort();
  const streamedType = /^event: (.+)$/m.exec(firstStreamed)?.[1];

  // Webhooks: made, listed, read, rotated, enabled, its (empty) log, deleted.
  const hook = await cairn.POST('/v1/webhooks', {
    body: { url: 'https://example.com/hooks/cairn', types: ['artifact.created'] },
  });
  if (!hook.data) fail('createWebhook', hook.error);
  const hookId: string = hook.data.webhook_id;
  const hooks = await cairn.GET('/v1/webhooks');
  const oneHook = await cairn.GET('/v1/webhooks/{id}', { params: { path: { id: hookId } } });
  const rotated = await cairn.POST('/v1/webhooks/{id}/rotate-secret', { params: { path: { id: hookId } } });
  const enabled = await cairn.POST('/v1/webhooks/{id}/enable', { params: { path: { id: hookId } } });
  const hookLog = await cairn.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: hookId } } });
  const unhooked = await cairn.DELETE('/v1/webhooks/{id}', { params: { path: { id: hookId } } });

  return {
    getHealth: { status: health.response.status, detail: health.data?.status },
    getWhoami: { status: whoami.response.status, detail: plan },
    uploadArtifact: { status: note.response.status, detail: [form.response.status, form.data.filename] },
    listArtifacts: { status: list.response.status, detail: { listed, hasMore, note: id } },
    getArtifact: { status: got.response.status, detail: page },
    getDownloadUrl: { status: download.response.status, detail: typeof downloadUrl },
    getDownloadUrls: { status: batch.response.status, detail: batchCount },
    createLink: {
      status: link.response.status,
      detail: [linkId?.slice(0, 4), shortLink.response.status, dayLink.response.status, dayLinkSeconds],
    },
    listLinks: { status: links.response.status, detail: linkCount },
    revokeLink: { status: revoked.response.status, detail: revoked.data?.revoked },
    listSessions: { status: sessions.response.status, detail: sessionCounts },
    requestUploadUrl: { status: ticket.response.status, detail: ticket.data.status },
    putUpload: { status: put.response.status, detail: put.data?.size_bytes },
    completeUpload: { status: complete.response.status, detail: completedSize },
    getResumableUploadOptions: {
      status: tusOptions.response.status,
      detail: tusOptions.response.headers.get('tus-version'),
    },
    createResumableUpload: { status: created.response.status, detail: uploadId.slice(0, 4) },
    getResumableUploadOffset: { status: head.response.status, detail: offset },
    appendToResumableUpload: {
      status: lastPiece.response.status,
      detail: [firstPiece.response.status, lastPiece.response.headers.get('upload-offset'), resumed.data?.size_bytes],
    },
    terminateResumableUpload: { status: terminated.response.status, detail: afterwards.response.status },
    publishArtifact: { status: published.response.status, detail: published.data.access },
    getPageGateInfo: { status: gate.response.status, detail: access },
    unlockPage: { status: unlock.response.status, detail: tokenSeconds },
    reportPage: { status: report.response.status, detail: report.data?.received },
    unpublishArtifact: { status: unpublished.response.status, detail: unpublished.data?.unpublished },
    deleteArtifact: { status: deleted.response.status, detail: [typeof deletedAt, again.response.status, goneCode] },
    sealSession: { status: sealed.response.status, detail: sealed.data?.status },
    getSessionArchive: { status: archive.response.status, detail: signedArchive(archive) },
    getArtifactsArchive: { status: listArchive.response.status, detail: signedArchive(listArchive) },
    createSessionLink: { status: sessionLink.response.status, detail: sessionLinkId?.slice(0, 4) },
    listSessionLinks: { status: sessionLinks.response.status, detail: sessionLinks.data?.links.length },
    listEvents: { status: events.response.status, detail: sealedEvent },
    streamEvents: { status: stream.response.status, detail: streamedType },
    createWebhook: { status: hook.response.status, detail: hook.data.secret.slice(0, 6) },
    listWebhooks: { status: hooks.response.status, detail: hooks.data?.webhooks.length },
    getWebhook: { status: oneHook.response.status, detail: oneHook.data?.status },
    rotateWebhookSecret: { status: rotated.response.status, detail: rotated.data?.secret !== hook.data.secret },
    enableWebhook: { status: enabled.response.status, detail: enabled.data?.status },
    listWebhookDeliveries: { status: hookLog.response.status, detail: hookLog.data?.deliveries.length },
    deleteWebhook: { status: unhooked.response.status, detail: unhooked.data?.deleted },
  };
}
