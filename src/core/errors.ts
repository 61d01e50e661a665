import type { ErrorEnvelope } from '../wire/common.js';

/**
 * The one error type of Cairn. Core services throw it; every edge (HTTP, CLI, MCP) renders it.
 * `code` is the stable contract clients match on; `message` is for people and may change.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  ttl_exceeds_plan_limit: 400,
  unauthorized: 401,
  quota_exceeded: 403,
  insufficient_scope: 403,
  page_taken_down: 403,
  origin_not_allowed: 403,
  artifact_not_found: 404,
  session_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  session_sealed: 409,
  upload_not_found: 409,
  upload_offset_conflict: 409,
  artifact_already_deleted: 410,
  artifact_expired: 410,
  file_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  /** tus's own status for a piece whose Upload-Checksum does not match. */
  checksum_mismatch: 460,
  server_error: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorExtras {
  /** Seconds until a retry may succeed (429, and 503 for a transient condition). */
  retryAfterSeconds?: number;
  /** Where a tenant can lift a plan limit. */
  upgradeUrl?: string;
  /**
   * An HTTP status other than the code's own, for the few answers HTTP itself defines:
   * 408/431 for requests that cannot be read (code `invalid_request`), 412 for a tus request of
   * another protocol version (code `invalid_request`), 503 for a transient refusal (code
   * `server_error`, with `retryAfterSeconds`), 507 when storage is full (code `server_error`).
   */
  status?: 408 | 412 | 431 | 503 | 507;
}

export class CairnError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extras: ErrorExtras;

  constructor(code: ErrorCode, message: string, extras: ErrorExtras = {}) {
    super(message);
    this.name = 'CairnError';
    this.code = code;
    this.status = extras.status ?? ERROR_STATUS[code];
    this.extras = extras;
  }
}

export function isCairnError(err: unknown): err is CairnError {
  return err instanceof CairnError;
}

/** The wire envelope (src/wire): `{error: {code, message, status, ...}}`. */
export function toEnvelope(err: CairnError, requestId?: string): ErrorEnvelope {
  const body: ErrorEnvelope['error'] = { code: err.code, message: err.message, status: err.status };
  if (err.extras.retryAfterSeconds !== undefined) {
    body.retry_after_seconds = err.extras.retryAfterSeconds;
    body.retry_after = err.extras.retryAfterSeconds;
  }
  if (err.extras.upgradeUrl !== undefined) body.upgrade_url = err.extras.upgradeUrl;
  if (requestId !== undefined) body.request_id = requestId;
  return { error: body };
}

export const invalid = (message: string) => new CairnError('invalid_request', message);
/** 503: a transient refusal (shutting down, storage busy) the client should simply retry later. */
export const unavailable = (message: string, retryAfterSeconds: number) =>
  new CairnError('server_error', message, { status: 503, retryAfterSeconds });
/** The id is echoed so a caller holding several can tell which; the next step finds real ids. */
export const artifactNotFound = (id: string) =>
  new CairnError(
    'artifact_not_found',
    `Artifact ${id} not found in this account. Find artifact ids by listing them: GET /v1/artifacts (e.g. ?filename=report.md).`,
  );

/** An id that cannot be an artifact's: a filename passed as an id is the usual mistake. */
export const notAnArtifactId = (id: string, field = 'artifact id') =>
  invalid(
    `${JSON.stringify(shorten(id))} is not an ${field}: artifact ids are art_ followed by 16 letters or digits ` +
      '(e.g. art_3fK9xQ2LmN8pR4tV). To find one by filename, list artifacts: GET /v1/artifacts?filename=report.md.',
  );

/** Long input is cut in messages: the caller knows what it sent. */
function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
