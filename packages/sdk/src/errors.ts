/** Every non-2xx answer and every network failure of the SDK. */
export class CairnError extends Error {
  /** error.code of the envelope, or 'network_error' / 'invalid_response'. */
  readonly code: string;
  /** HTTP status, 0 for network errors. */
  readonly status: number;
  /** Seconds, from retry_after_seconds / Retry-After. */
  readonly retryAfter: number | null;
  readonly upgradeUrl: string | null;
  readonly requestId: string | null;

  constructor(init: {
    code: string;
    message: string;
    status: number;
    retryAfter?: number | null;
    upgradeUrl?: string | null;
    requestId?: string | null;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'CairnError';
    this.code = init.code;
    this.status = init.status;
    this.retryAfter = init.retryAfter ?? null;
    this.upgradeUrl = init.upgradeUrl ?? null;
    this.requestId = init.requestId ?? null;
  }
}
