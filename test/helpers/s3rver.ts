import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestS3 } from './test-s3.js';

/** The part of s3rver 3.7 we use (it ships no type declarations). */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  /** s3rver emits an S3 event notification for each object it creates or removes. */
  on(event: 'event', listener: (e: S3rverEvent) => void): void;
  off(event: 'event', listener: (e: S3rverEvent) => void): void;
}
interface S3rverEvent {
  Records: { eventName: string; s3: { object: { key: string } } }[];
}
type S3rverConstructor = new (options: {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets?: { name: string }[];
}) => S3rverInstance;

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

/**
 * An S3-compatible server on loopback (a port chosen by the OS) over a fresh temp folder.
 * Buckets must be created by the client (S3BlobStore.init does) or listed in `buckets`. Tests
 * start it through startTestS3 (test-s3.ts), which can use a real engine instead.
 */
export async function startS3rver(opts: { buckets?: string[] } = {}): Promise<TestS3> {
  const directory = await mkdtemp(path.join(tmpdir(), 'cairn-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    ...(opts.buckets ? { configureBuckets: opts.buckets.map((name) => ({ name })) } : {}),
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    // s3rver accepts any signature made with these.
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    region: 'us-east-1',
    engine: 's3rver',
    checksPresignedUrls: false,
    honoursCopyConditions: false,
    onObjectEvent(listener) {
      const each = (e: S3rverEvent) => {
        for (const r of e.Records) listener(r.eventName, r.s3.object.key);
      };
      server.on('event', each);
      return () => server.off('event', each);
    },
    close: async () => {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
