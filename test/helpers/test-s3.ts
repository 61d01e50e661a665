import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { createdBucketOf, objectEventOf, startS3Proxy } from './s3-proxy.js';
import { startS3rver } from './s3rver.js';

/**
 * The S3 the tests use: s3rver on loopback by default, or the engine these variables name (for
 * example the Ceph RGW of `scripts/ceph-rgw.sh up`, which prints them):
 *
 *   CAIRN_TEST_S3_ENDPOINT           http://127.0.0.1:7480 (path-style requests)
 *   CAIRN_TEST_S3_ACCESS_KEY_ID      its access key
 *   CAIRN_TEST_S3_SECRET_ACCESS_KEY  its secret
 *   CAIRN_TEST_S3_REGION             default us-east-1
 *
 * They switch the S3 blob store's contract suite, test/scaleout and the e2e-scaleout project.
 */
export interface TestS3 {
  /** `http://127.0.0.1:<port>`: use with `forcePathStyle: true`. */
  endpoint: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  region: string;
  /** `s3rver`, or `external` for the engine CAIRN_TEST_S3_ENDPOINT names. */
  engine: 's3rver' | 'external';
  /**
   * Whether the engine checks presigned URLs as S3 does: a tampered signature, or a presigned
   * PUT's body of another length than the signed Content-Length, is `403 SignatureDoesNotMatch`.
   * s3rver checks no presigned signature at all.
   */
  checksPresignedUrls: boolean;
  /**
   * Whether a CopyObject conditional on the source's ETag, as Cairn sends it (under S3's name and
   * RGW's), is refused when the ETag changed; s3rver copies regardless.
   */
  honoursCopyConditions: boolean;
  /**
   * Calls `listener` with every object created (`ObjectCreated:Put`, `ObjectCreated:Copy`, a
   * completed multipart upload) or deleted (`ObjectRemoved:Delete`), by full key, after the fact;
   * returns the function that stops it.
   */
  onObjectEvent(listener: (eventName: string, key: string) => void): () => void;
  /** Stops s3rver; on an external engine, removes the buckets created through it (not `buckets`). */
  close(): Promise<void>;
}

/** The external engine's settings, or null for s3rver; a half-set group is a mistake, refused. */
function externalS3(env: NodeJS.ProcessEnv = process.env) {
  const endpoint = env.CAIRN_TEST_S3_ENDPOINT;
  if (!endpoint) return null;
  const accessKeyId = env.CAIRN_TEST_S3_ACCESS_KEY_ID;
  const secretAccessKey = env.CAIRN_TEST_S3_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      'CAIRN_TEST_S3_ENDPOINT is set, so CAIRN_TEST_S3_ACCESS_KEY_ID and CAIRN_TEST_S3_SECRET_ACCESS_KEY must be too.',
    );
  }
  return { endpoint, region: env.CAIRN_TEST_S3_REGION || 'us-east-1', credentials: { accessKeyId, secretAccessKey } };
}

/**
 * An S3 for one test file: s3rver over a fresh folder, or the external engine. `buckets` are
 * created if they do not exist (an external engine's are shared by every file and kept).
 */
export async function startTestS3(opts: { buckets?: string[] } = {}): Promise<TestS3> {
  const external = externalS3();
  if (!external) return startS3rver(opts);
  return connectExternal(external, opts.buckets ?? []);
}

/**
 * The external engine, reached through a recording proxy: it is how the tests see the objects
 * created and deleted (s3rver emits events; a real engine's notifications need a topic), and
 * which buckets to remove at the end.
 */
async function connectExternal(
  settings: NonNullable<ReturnType<typeof externalS3>>,
  buckets: string[],
): Promise<TestS3> {
  const client = new S3Client({ ...settings, forcePathStyle: true });
  for (const Bucket of buckets) {
    await client.send(new CreateBucketCommand({ Bucket })).catch((err: unknown) => {
      if ((err as { name?: string }).name !== 'BucketAlreadyOwnedByYou') throw err;
    });
  }
  const proxy = await startS3Proxy(settings.endpoint);
  const created = new Set<string>();
  proxy.onAnswered((r) => {
    const bucket = createdBucketOf(r);
    if (bucket) created.add(bucket);
  });
  return {
    endpoint: proxy.url,
    credentials: settings.credentials,
    region: settings.region,
    engine: 'external',
    checksPresignedUrls: true,
    honoursCopyConditions: true,
    onObjectEvent(listener) {
      return proxy.onAnswered((r) => {
        const event = objectEventOf(r);
        if (event) listener(event.name, event.key);
      });
    },
    async close() {
      await proxy.close();
      try {
        for (const Bucket of created) {
          await emptyPrefix(client, Bucket, '');
          await client.send(new DeleteBucketCommand({ Bucket }));
        }
      } finally {
        client.destroy();
      }
    },
  };
}

/**
 * Deletes every object under `prefix` and aborts its unfinished multipart uploads (where the
 * engine lists them: s3rver does not), so a shared engine keeps nothing of a test.
 */
export async function emptyPrefix(client: S3Client, Bucket: string, prefix: string): Promise<void> {
  let ContinuationToken: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket, Prefix: prefix, ...(ContinuationToken ? { ContinuationToken } : {}) }),
    );
    for (const { Key } of page.Contents ?? []) if (Key) await client.send(new DeleteObjectCommand({ Bucket, Key }));
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket, Prefix: prefix })).catch(() => null);
  for (const { Key, UploadId } of uploads?.Uploads ?? []) {
    if (Key && UploadId) await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }));
  }
}
