import { CairnError, toEnvelope } from '../core/errors.js';
import { stderrLine } from './terminal-text.js';
import { UsageError } from './usage-error.js';

/**
 * Under `--json` a failure is machine-readable too: the API's `{error:{code,message,status}}`
 * envelope, one line on stderr (stdout stays empty). Returns the exit code: 2 for a usage
 * mistake (as `invalid_request`), 1 for anything else.
 */
export function printJsonError(err: unknown): number {
  const error =
    err instanceof CairnError
      ? err
      : err instanceof UsageError
        ? new CairnError('invalid_request', err.message)
        : new CairnError('server_error', err instanceof Error ? err.message : String(err));
  stderrLine(JSON.stringify(toEnvelope(error)));
  return err instanceof UsageError ? 2 : 1;
}
