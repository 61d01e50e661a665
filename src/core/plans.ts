import type { PlanName } from '../shared/plan-name.js';
import {
  INLINE_UPLOAD_BYTES,
  LARGE_UPLOAD_BYTES,
  SINGLE_LIMIT_TEXT,
  SINGLE_UPLOAD_BYTES,
} from '../shared/upload-limits.js';

export { INLINE_LIMIT_TEXT, LARGE_LIMIT_TEXT, SINGLE_LIMIT_TEXT } from '../shared/upload-limits.js';
/** The multipart limit as messages say it: "500 MiB (524,288,000 bytes)". */
export const MULTIPART_LIMIT_TEXT = SINGLE_LIMIT_TEXT;

export type { PlanName } from '../shared/plan-name.js';

/** Every plan limit of the spec's Plans table (plus active links from API.md), in one place. */
export interface PlanLimits {
  storageBytes: number;
  requestsPerMonth: number;
  maxTtlSeconds: number;
  apiKeys: number;
  activeLinks: number;
  rateLimitSustained: number;
  rateLimitBurst: number;
  presignedUpload: boolean;
  passwordPages: boolean;
  /** Webhook endpoints. */
  webhooks: number;
}

const GB = 1_000_000_000;
const DAY = 86_400;

export const PLANS: Record<PlanName, PlanLimits> = {
  free: {
    storageBytes: 1 * GB,
    requestsPerMonth: 10_000,
    maxTtlSeconds: 90 * DAY,
    apiKeys: 10,
    activeLinks: 100,
    rateLimitSustained: 100,
    rateLimitBurst: 200,
    presignedUpload: false,
    passwordPages: false,
    webhooks: 2,
  },
  pro: {
    storageBytes: 50 * GB,
    requestsPerMonth: 100_000,
    maxTtlSeconds: 365 * DAY,
    apiKeys: 50,
    activeLinks: 1_000,
    rateLimitSustained: 100,
    rateLimitBurst: 200,
    presignedUpload: true,
    passwordPages: true,
    webhooks: 20,
  },
};

/**
 * Requests that name no tenant (no key or a bad one, /health, unknown routes, public page calls
 * whose slug does not resolve) are limited per client IP, at the plans' rate.
 */
export const ANONYMOUS_RATE_LIMIT = { rateLimitSustained: 100, rateLimitBurst: 200 } as const;

export const PLAN_NAMES = Object.keys(PLANS) as PlanName[];

export function isPlanName(s: string): s is PlanName {
  return s === 'free' || s === 'pro';
}

/**
 * Size limits of the Limits table. The upload sizes are binary (src/shared/upload-limits.ts):
 * 10 MiB, 500 MiB and 5 GiB.
 */
export const LIMITS = {
  multipartBytes: SINGLE_UPLOAD_BYTES,
  jsonDecodedBytes: INLINE_UPLOAD_BYTES,
  presignedBytes: LARGE_UPLOAD_BYTES,
  metadataBytes: 8 * 1024,
  /** `metadata.<key>=<value>` filters in one list query (AND-ed). */
  metadataFilters: 8,
  /** Levels of nested objects and arrays in metadata, the metadata object itself being level 1. */
  metadataDepth: 32,
  listDefault: 50,
  listMax: 200,
  defaultTtlSeconds: 30 * DAY,
  linkDefaultSeconds: 7 * DAY,
  linkMaxSeconds: 30 * DAY,
  downloadUrlSeconds: 3600,
  /** Artifact ids in one `POST /v1/artifacts/batch/download-urls`. */
  batchDownloadUrls: 20,
  /** Artifacts in one archive (`GET /v1/sessions/{id}/archive`, `GET /v1/artifacts/archive`). */
  archiveArtifacts: 10_000,
  /** How long a signed archive URL stays valid. */
  archiveUrlSeconds: 3600,
  idempotencySeconds: DAY,
  /** How long a revoked link is remembered, so that revoking it again answers its owner the same. */
  revokedLinkRetentionSeconds: DAY,
  softDeleteRetentionSeconds: 30 * DAY,
  contentTokenSeconds: 300,
  reportDetailChars: 2000,
} as const;
