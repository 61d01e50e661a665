import { CairnError, withoutFinalPeriod } from '../shared/cairn-error.js';
import type { ErrorEnvelope } from '../wire/common.js';

export { CairnError, ERROR_STATUS, type ErrorCode, type ErrorExtras, isCairnError } from '../shared/cairn-error.js';

/** The wire envelope (src/wire): `{error: {code, message, status, ...}}`. */
export function toEnvelope(err: CairnError, requestId?: string): ErrorEnvelope {
  const body: ErrorEnvelope['error'] = { code: err.code, message: withoutFinalPeriod(err.message), status: err.status };
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
