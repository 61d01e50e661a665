import { CairnError } from 'cairn-store-sdk';
import { stderrLine } from '../terminal-text.js';

/**
 * Under `--json` a client command's failure is machine-readable, as the admin commands' are: the
 * API's `{"error":{"code","message","status",…}}` envelope, one line on stderr, stdout empty.
 * API answers keep their own fields; a network failure is `network_error` with status 0; a usage
 * mistake (exit 2) is `invalid_request` with status 400 (`printJsonUsageError`, usage-error.ts).
 */
export function printJsonFailure(err: unknown): void {
  stderrLine(JSON.stringify({ error: envelopeBody(err) }));
}

function envelopeBody(err: unknown): Record<string, unknown> {
  if (err instanceof CairnError) {
    const body: Record<string, unknown> = { code: err.code, message: err.message, status: err.status };
    if (err.retryAfter !== null) body.retry_after_seconds = err.retryAfter;
    if (err.upgradeUrl !== null) body.upgrade_url = err.upgradeUrl;
    if (err.requestId !== null) body.request_id = err.requestId;
    return body;
  }
  return { code: 'client_error', message: err instanceof Error ? err.message : String(err), status: 0 };
}
