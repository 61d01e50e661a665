import http from 'node:http';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { faultTestsRunnable } from './services.js';
import { type FaultStack, startFaultStack } from './stack.js';
import { expectNothingLost, Traffic } from './traffic.js';

/** The S3-compatible server killed mid-upload and started again (ports 19330-19332). */
const runnable = faultTestsRunnable('test/faults/s3.test.ts');

let stack: FaultStack;

async function objectKeys(): Promise<string[]> {
  const client = new S3Client({
    endpoint: stack.s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: stack.s3.credentials,
  });
  try {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: stack.s3.bucket, ...(token ? { ContinuationToken: token } : {}) }),
      );
      for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  } finally {
    client.destroy();
  }
}

/**
 * A 24 MiB multipart upload whose body is held back half-way: `sendRest` writes the rest.
 * Resolves `response` with the status and body Cairn answered (possibly before the body ended).
 */
function heldUpload(filename: string) {
  const boundary = 'faultboundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const half = Buffer.alloc(12 * 1024 * 1024, 7);
  const req = http.request(`${stack.apiUrl}/v1/artifacts`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${stack.key}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + 2 * half.length + tail.length),
    },
  });
  const response = new Promise<{ status: number; body: string; retryAfter: string | undefined }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body, retryAfter: res.headers['retry-after'] as string | undefined }),
      );
    });
    req.on('error', reject);
  });
  const firstHalf = new Promise<void>((resolve) => req.write(Buffer.concat([head, half]), () => resolve()));
  return {
    firstHalf,
    response,
    sendRest: () => {
      req.write(half, () => req.end(tail));
      // Cairn may answer and close before taking the rest; that is not an error of the test.
      req.on('error', () => {});
    },
  };
}

describe.runIf(runnable)('S3 faults', () => {
  beforeAll(async () => {
    stack = await startFaultStack(19330);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  it('killed mid-upload: 503 with Retry-After, no row, no orphan the sweeper cannot find; reads fail and recover', async () => {
    const t = new Traffic(stack.apiUrl, stack.key).start();
    let big: ReturnType<typeof heldUpload> | undefined;
    try {
      await t.until(() => t.stored.size >= 10, '10 uploads before the fault');
      big = heldUpload(`${t.prefix}big.bin`);
      await big.firstHalf;
      // Half the body is in: Cairn is streaming its first part to S3 when the server dies.
      await stack.s3.kill();
      big.sendRest();
      const answer = await big.response;
      expect(answer.status, answer.body).toBe(503);
      expect(answer.retryAfter).toMatch(/^\d+$/);
      expect(JSON.parse(answer.body).error.code).toBe('server_error');
      const refused = t.counts.refused;
      await t.until(() => t.counts.refused >= refused + 10, 'reads and uploads refused while S3 is down');
      expect((await fetch(`${stack.metricsUrl}/ready`)).status).toBe(503);
      await stack.s3.start();
      const stored = t.stored.size;
      const ok = t.counts.ok;
      await t.until(() => t.stored.size >= stored + 10 && t.counts.ok >= ok + 30, 'uploads and reads once S3 is back');
      // Recovery is shown by the traffic; readiness is awaited once it stops. The probe is its own
      // HeadBucket, bounded at 2 s: while the traffic keeps the single-process s3rver busy with
      // uploads, a HEAD can queue behind them past that bound on a loaded machine, again and again.
      await t.stop();
      await vi.waitFor(
        async () => {
          const ready = await fetch(`${stack.metricsUrl}/ready`);
          // The body names the check that failed, should this ever time out.
          expect(ready.status, await ready.text()).toBe(200);
        },
        {
          timeout: 30_000,
          interval: 250,
        },
      );
    } finally {
      await t.stop();
    }
    expect(t.violations).toEqual([]);
    t.refusedUploads.add(`${t.prefix}big.bin`);
    await expectNothingLost(stack.apiUrl, stack.key, t);

    // Every object is a blob the database knows (a live artifact's, or one the sweeper will
    // find by its row), or staging that the sweeper and the bucket's lifecycle rule remove.
    const db = await stack.pg.client();
    try {
      const rows = await db.query<{ k: string }>("SELECT tenant_id || '/' || content_hash AS k FROM blobs");
      const known = new Set(rows.rows.map((r) => r.k));
      const unknown = (await objectKeys()).filter((k) => !known.has(k) && !k.startsWith('staging/'));
      expect(unknown).toEqual([]);
    } finally {
      await db.end();
    }
  }, 180_000);
});
