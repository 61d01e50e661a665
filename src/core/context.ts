import type { AbuseSink } from '../ports/abuse-sink.js';
import type { ArtifactStore } from '../ports/artifact-store.js';
import type { BlobStore } from '../ports/blob-store.js';
import type { Clock } from '../ports/clock.js';
import type { EventStore } from '../ports/event-store.js';
import type { McpSessionStore } from '../ports/mcp-session-store.js';
import type { RateLimiter } from '../ports/rate-limiter.js';
import type { ResumableUploadStore } from '../ports/resumable-upload-store.js';
import type { SharingStore } from '../ports/sharing-store.js';
import type { SweeperStore } from '../ports/sweeper-store.js';
import type { TenantStore } from '../ports/tenant-store.js';
import type { WebhookSender } from '../ports/webhook-sender.js';
import type { WebhookStore } from '../ports/webhook-store.js';
import type { UrlSigner } from './signing.js';
import type { SweepReport } from './sweeper.js';

/** Public base URLs of the three listeners (plus the download host, which defaults to content). */
export interface Origins {
  api: string;
  viewer: string;
  content: string;
  download: string;
}

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Everything a core service may use: ports and a few settings. No I/O library is imported by the
 * core. The metadata database comes as one port per aggregate (the composition root fills all four
 * with the same adapter object); a service names the ones it uses (see each service's deps type).
 */
export interface CoreDeps {
  tenantStore: TenantStore;
  artifactStore: ArtifactStore;
  sharingStore: SharingStore;
  sweeperStore: SweeperStore;
  /** The change feed (written by the other ports' own writes; read and swept through this one). */
  eventStore: EventStore;
  /** Webhook endpoints, their leases and delivery log. */
  webhookStore: WebhookStore;
  /** The hosted MCP endpoint's sessions and subscriptions. */
  mcpSessionStore: McpSessionStore;
  /** Sends deliveries (with the SSRF checks); absent, nothing is delivered by this process. */
  webhookSender?: WebhookSender;
  /** The operator allows webhooks to private, loopback and link-local addresses (development, tests). */
  webhookAllowPrivate?: boolean;
  /** A delivery attempt's time bound, in ms (default 10 s). */
  webhookTimeoutMs?: number;
  resumables: ResumableUploadStore;
  blobs: BlobStore;
  limiter: RateLimiter;
  clock: Clock;
  abuse: AbuseSink;
  signer: UrlSigner;
  /** Secret for content tokens (HS256). */
  tokenSecret: string;
  origins: Origins;
  upgradeUrl: string;
  /** Use the blob store's own presigned GET (S3) for download URLs, when it has one. */
  directDownloads?: boolean;
  /** Large uploads in flight per tenant in this process (see UploadSlots); 0 is no limit. */
  maxUploadsPerTenant?: number;
  /** How long events are kept, in ms (default 7 days). */
  eventRetentionMs?: number;
  /** Event streams one tenant may hold open in this process (see EventHub). */
  maxEventStreamsPerTenant?: number;
  log: Logger;
  /** Told of what operators count (the metrics); absent, nothing is counted. */
  observer?: CoreObserver;
}

/** Events of the core that the metrics count; each call is cheap and must not throw. */
export interface CoreObserver {
  /** A new artifact's bytes were stored (not a replay of an earlier upload). */
  uploadStored(sizeBytes: number): void;
  /** A scheduled sweeper run ended: what it removed, or null when it failed. */
  sweepFinished(report: SweepReport | null, seconds: number): void;
}

export const blobKey = (tenantId: string, contentHash: string) => `${tenantId}/${contentHash}`;
