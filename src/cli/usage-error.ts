import { stderrLine } from './terminal-text.js';

/** A mistake in how the command was called: printed plainly, exit code 2. */
export class UsageError extends Error {}

/**
 * A usage mistake (commander's or Cairn's) under `--json`: the error envelope as `invalid_request`,
 * one line on stderr. `text` may carry commander's "error: " prefix.
 */
export function printJsonUsageError(text: string): void {
  const message = text.replace(/^error:\s*/i, '').trim();
  stderrLine(JSON.stringify({ error: { code: 'invalid_request', message, status: 400 } }));
}
