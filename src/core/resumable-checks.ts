import type { Hash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { CairnError, invalid } from './errors.js';
import { LIMITS, PLANS, type PlanName } from './plans.js';

/** The checks of a resumable upload's headers: its length against the plan, and its checksum. */

/** The digests `Upload-Checksum` may carry (tus checksum extension). */
export const CHECKSUM_ALGORITHMS = ['sha1', 'sha256'] as const;
type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

export interface Checksum {
  algorithm: ChecksumAlgorithm;
  /** Base64 digest of the PATCH's body. */
  digest: string;
}

/** The largest upload a plan takes: the presigned limit where the plan has it, else the multipart one. */
export const maxResumableBytes = (plan: PlanName) =>
  PLANS[plan].presignedUpload ? LIMITS.presignedBytes : LIMITS.multipartBytes;

/** `Upload-Checksum: <algorithm> <base64>`; anything else is 400, as the tus checksum extension asks. */
export function parseChecksum(header: string | undefined): Checksum | null {
  if (header === undefined) return null;
  const m = /^([a-z0-9-]+) ([A-Za-z0-9+/]+={0,2})$/.exec(header.trim());
  if (!m)
    throw invalid(
      'Upload-Checksum must be "<algorithm> <base64 digest>", e.g. "sha256 47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=".',
    );
  const algorithm = m[1] as ChecksumAlgorithm;
  if (!CHECKSUM_ALGORITHMS.includes(algorithm)) {
    throw invalid(`Upload-Checksum algorithm ${m[1]} is not supported; use one of ${CHECKSUM_ALGORITHMS.join(', ')}.`);
  }
  return { algorithm, digest: m[2]! };
}

/** `Upload-Length`: a whole number of bytes within the plan's limit (no deferred lengths). */
export function checkLength(value: unknown, plan: PlanName, upgradeUrl: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid('Upload-Length must be a whole number of bytes (deferred lengths are not supported).');
  }
  const max = maxResumableBytes(plan);
  if (value > max) {
    throw new CairnError('file_too_large', `Upload-Length ${value} is over the ${plan} plan's limit of ${max} bytes.`, {
      ...(plan === 'free' ? { upgradeUrl } : {}),
    });
  }
  return value;
}

/** Passes `source` on, feeding every chunk to `hash` on the way. */
export async function* hashing(source: Readable, hash: Hash): AsyncGenerator<Buffer> {
  for await (const chunk of source as AsyncIterable<Buffer>) {
    hash.update(chunk);
    yield chunk;
  }
}
