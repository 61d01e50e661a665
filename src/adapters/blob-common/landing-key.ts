/**
 * The landing keys the core builds: `uploads/<tenant>/<artifact id>` for a presigned upload, and
 * `uploads/<tenant>/<artifact id>.<offset>.<16 hex>` for one piece of a resumable upload. Anything
 * else is a bug, refused before it reaches a disk or a bucket (no `..`, no other folder).
 */
const LANDING_KEY = /^uploads\/[A-Za-z0-9_]{1,64}\/[A-Za-z0-9_]{1,64}(?:\.[0-9]{1,16}\.[0-9a-f]{16})?$/;

export function checkLandingKey(landingKey: string): string {
  if (!LANDING_KEY.test(landingKey))
    throw new Error(`invalid landing key: ${JSON.stringify(landingKey).slice(0, 100)}`);
  return landingKey;
}
