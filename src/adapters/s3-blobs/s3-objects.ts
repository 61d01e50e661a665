import { DeleteObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** Small S3 helpers shared by the blob store and its landing area. */

/** How the SDK names an S3 error (`NoSuchKey`, `PreconditionFailed`, …). */
export function errorName(err: unknown): string {
  return typeof err === 'object' && err !== null ? String((err as { name?: unknown }).name ?? '') : '';
}

export function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

export function isNotFound(err: unknown): boolean {
  return ['NotFound', 'NoSuchKey', 'NoSuchBucket'].includes(errorName(err)) || httpStatus(err) === 404;
}

/** DeleteObject succeeds for a missing key on S3; some compatible servers answer 404, also fine. */
export async function deleteQuietly(client: S3Client, bucket: string, key: string): Promise<void> {
  try {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** The `CopySource` of a CopyObject: bucket and URL-encoded key, slashes kept. */
export function copySource(bucket: string, key: string): string {
  return `${bucket}/${encodeURIComponent(key).replace(/%2F/g, '/')}`;
}

/** Deletes the objects under `prefix` last written before `before` (ms); returns how many. */
export async function deleteOlderThan(
  client: S3Client,
  bucket: string,
  prefix: string,
  before: number,
): Promise<number> {
  let removed = 0;
  let ContinuationToken: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(ContinuationToken ? { ContinuationToken } : {}) }),
    );
    for (const object of page.Contents ?? []) {
      if (object.Key && object.LastModified && object.LastModified.getTime() < before) {
        await deleteQuietly(client, bucket, object.Key);
        removed++;
      }
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
  return removed;
}
