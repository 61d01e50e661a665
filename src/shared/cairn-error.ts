/**
 * The one error type of Cairn. Core services throw it; every edge (HTTP, CLI, MCP) renders it.
 * `code` is the stable contract clients match on; `message` is for people and may change.
 *
 * It lives outside the core because adapters throw it too (a conflict found inside a transaction,
 * a stream that breaks a size limit): ports and adapters import nothing from the core, and the
 * core re-exports it (core/errors.ts) with the helpers that build its common cases.
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
   * 406 for a GET /mcp stream asked without Accept: text/event-stream, 408/431 for requests
   * that cannot be read (code `invalid_request`), 412 for a tus request of
   * another protocol version (code `invalid_request`), 503 for a transient refusal (code
   * `server_error`, with `retryAfterSeconds`), 507 when storage is full (code `server_error`).
   */
  status?: 406 | 408 | 412 | 431 | 503 | 507;
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

/**
 * A message without its final period. The API's error envelope ends its `message` without one, as
 * the hosted service's messages do: its clients template them (`${message}. Set …`), and a period
 * of ours made "revoked).. Set". Messages are written as sentences; the edges drop the last stop.
 */
export function withoutFinalPeriod(message: string): string {
  return message.replace(/\.+\s*$/, '');
}
