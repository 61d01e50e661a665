/** What one delivery attempt came to. */
export interface SendOutcome {
  /** The final response's status; null when none came (refused, unreachable, timed out). */
  status: number | null;
  /** Why it failed, for the delivery log (short, no secrets). */
  error: string | null;
  durationMs: number;
}

/**
 * Sends a webhook delivery: one POST of `body` with `headers` to `url`, following a few
 * redirects. The adapter refuses loopback, private and link-local destinations after resolving
 * the name and at every redirect, unless its operator allowed them; it bounds the time and the
 * response it reads. Never throws: every failure is an outcome.
 */
export interface WebhookSender {
  send(url: string, headers: Record<string, string>, body: string): Promise<SendOutcome>;
}
