import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the secret is `whsec_` and
 * base64 of random bytes; a delivery carries `webhook-id`, `webhook-timestamp` (seconds) and
 * `webhook-signature`, `v1,` and base64 of HMAC-SHA256 over `${id}.${timestamp}.${body}` keyed
 * with the secret's bytes, one per secret still valid (after a rotation, the old one for a day),
 * separated by spaces.
 */
export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export function signature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Cairn-Webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signature(s, id, timestampSeconds, body)).join(' '),
  };
}
