import { AccessService } from './access.js';
import { ArchiveService } from './archives.js';
import { ArtifactService } from './artifacts.js';
import type { CoreDeps } from './context.js';
import { EventHub } from './event-hub.js';
import { EventService } from './events.js';
import { McpSessionService } from './mcp-sessions.js';
import { PageService } from './pages.js';
import { Argon2idHasher } from './passwords.js';
import { PresignedUploadService } from './presigned.js';
import { RequestCounter } from './request-counter.js';
import { ResumableUploadService } from './resumable.js';
import { SessionService } from './sessions.js';
import { SharingService } from './sharing.js';
import { Sweeper } from './sweeper.js';
import { TenantService } from './tenants.js';
import { UploadService } from './upload.js';
import { DEFAULT_MAX_UPLOADS_PER_TENANT, UploadSlots } from './upload-slots.js';
import { WebhookDeliverer } from './webhooks/deliverer.js';
import { WebhookService } from './webhooks/service.js';

/** The core services, built once over the ports by the composition root. */
export interface Core {
  deps: CoreDeps;
  tenants: TenantService;
  access: AccessService;
  /** The monthly request counters, counted in memory and flushed in batches (serve starts its timer). */
  requests: RequestCounter;
  uploads: UploadService;
  /** Large uploads in flight per tenant (taken by every route that receives one). */
  uploadSlots: UploadSlots;
  presigned: PresignedUploadService;
  /** Resumable uploads (tus). */
  resumable: ResumableUploadService;
  artifacts: ArtifactService;
  sharing: SharingService;
  /** Archives of a session or of a list query's matches. */
  archives: ArchiveService;
  sessions: SessionService;
  pages: PageService;
  /** The change feed: GET /v1/events, the stream, webhooks. */
  events: EventService;
  /** Tells streams and deliverers that a tenant's feed moved, on any instance; bounds streams per tenant. */
  eventHub: EventHub;
  webhooks: WebhookService;
  /** Sessions of the hosted MCP endpoint and their resource subscriptions. */
  mcpSessions: McpSessionService;
  /** Delivers events to webhooks (null when this process has no sender); serve starts its timer. */
  deliverer: WebhookDeliverer | null;
  sweeper: Sweeper;
}

export function createCore(deps: CoreDeps): Core {
  const uploads = new UploadService(deps);
  const uploadSlots = new UploadSlots(deps.maxUploadsPerTenant ?? DEFAULT_MAX_UPLOADS_PER_TENANT);
  const pages = new PageService(deps, new Argon2idHasher());
  const requests = new RequestCounter(deps.tenantStore, (err) =>
    deps.log.warn({ err: String(err) }, 'request counts not written yet; will retry'),
  );
  return {
    deps,
    tenants: new TenantService(deps, requests),
    access: new AccessService(deps, pages, requests),
    requests,
    uploads,
    uploadSlots,
    presigned: new PresignedUploadService(deps, uploads, uploadSlots),
    resumable: new ResumableUploadService(deps, uploads),
    artifacts: new ArtifactService(deps),
    sharing: new SharingService(deps),
    archives: new ArchiveService(deps),
    sessions: new SessionService(deps),
    pages,
    events: new EventService(deps),
    eventHub: new EventHub(deps.eventStore, deps.maxEventStreamsPerTenant, undefined, (err) =>
      deps.log.warn({ err: String(err) }, 'event feed heads not read; will retry'),
    ),
    webhooks: new WebhookService(deps),
    mcpSessions: new McpSessionService(deps),
    deliverer: deps.webhookSender
      ? new WebhookDeliverer({ ...deps, sender: deps.webhookSender }, { timeoutMs: deps.webhookTimeoutMs ?? 10_000 })
      : null,
    sweeper: new Sweeper(deps),
  };
}
