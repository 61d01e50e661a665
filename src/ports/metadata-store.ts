import type { ArtifactStore } from './artifact-store.js';
import type { EventStore } from './event-store.js';
import type { McpSessionStore } from './mcp-session-store.js';
import type { MetadataLifecycle } from './metadata-lifecycle.js';
import type { SharingStore } from './sharing-store.js';
import type { SweeperStore } from './sweeper-store.js';
import type { TenantStore } from './tenant-store.js';
import type { WebhookStore } from './webhook-store.js';

export type {
  ArtifactQuery,
  ArtifactStore,
  BlobPin,
  BlobWriter,
  IdempotentResponse,
  InsertArtifactInput,
  InsertArtifactResult,
  KeysetCursor,
  MetadataMatch,
  SessionQuery,
  SoftDeleteResult,
} from './artifact-store.js';
export type { EventQuery, EventRow, EventStore } from './event-store.js';
export type { McpSessionRow, McpSessionStore } from './mcp-session-store.js';
export type { MetadataLifecycle, MigrationResult } from './metadata-lifecycle.js';
export type {
  ApiKeyRow,
  ArtifactRow,
  ArtifactStatus,
  LinkRow,
  PageRow,
  SessionLinkRow,
  SessionRow,
  TenantRow,
} from './metadata-records.js';
export type { LinkQuery, PageInput, SharingStore } from './sharing-store.js';
export type { BlobRef, ExpiredBatchResult, SweeperStore } from './sweeper-store.js';
export type { RequestDelta, TenantStore } from './tenant-store.js';
export type { AttemptRecord, DeliveryRow, WebhookRow, WebhookStore } from './webhook-store.js';

/**
 * The metadata database: records of tenants, keys, artifacts, sessions, links, pages and usage,
 * cut into one port per aggregate (tenant-store, artifact-store, sharing-store, sweeper-store,
 * event-store)
 * plus the lifecycle the composition root drives (metadata-lifecycle). Each adapter (SQLite,
 * PostgreSQL) implements all of them in one class over one connection or pool; the core never
 * depends on this type: each service takes the narrow port it uses (CoreDeps has one field per
 * port, all filled by the composition root with the same adapter object).
 *
 * Every method is one atomic unit of work: the adapter runs it in a transaction (or an equivalent
 * single statement), so concurrent callers, in one process or many, never see half of it.
 * Rules that need atomicity (quotas, sealed sessions, idempotency) are decided by the core and
 * passed in as parameters; the adapter only enforces them inside its transaction.
 *
 * All timestamps are integer milliseconds since the Unix epoch. Adapters may throw
 * `CairnError` for the conflicts named in the ports; any other failure is a plain Error.
 */
export type MetadataStore = MetadataLifecycle &
  TenantStore &
  ArtifactStore &
  SharingStore &
  SweeperStore &
  EventStore &
  WebhookStore &
  McpSessionStore;
