import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { endToEndHeaders } from './proxy-headers.js';

/** A request the proxy forwarded, headers as the client sent them, and the status S3 answered. */
export interface ProxiedS3Request {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Set once the answer's head has come back. */
  status?: number;
}

export interface S3Proxy {
  url: string;
  /** Every request so far, in the order they arrived. */
  readonly seen: ProxiedS3Request[];
  /** Calls `listener` with each request once S3 has answered it. */
  onAnswered(listener: (r: Required<ProxiedS3Request>) => void): () => void;
  close(): Promise<void>;
}

/**
 * A pass-through HTTP proxy in front of an S3 endpoint that records what it forwards. Headers go
 * on as they came but for hop-by-hop ones, Host too: SigV4 signatures and presigned URLs cover
 * it, so they stay valid through the proxy.
 */
export async function startS3Proxy(target: string): Promise<S3Proxy> {
  const seen: ProxiedS3Request[] = [];
  const listeners = new Set<(r: Required<ProxiedS3Request>) => void>();
  const agent = new http.Agent({ keepAlive: true });
  const server = http.createServer((req, res) => {
    const record: ProxiedS3Request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers };
    seen.push(record);
    const upstream = http.request(
      new URL(record.url, target),
      { method: record.method, headers: endToEndHeaders(req.headers), agent },
      (up) => {
        record.status = up.statusCode ?? 502;
        res.writeHead(record.status, endToEndHeaders(up.headers));
        up.pipe(res);
        up.on('end', () => {
          for (const listener of listeners) listener(record as Required<ProxiedS3Request>);
        });
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.on('error', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    onAnswered(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The S3 event a path-style request made, named as S3 event notifications name them
 * (`ObjectCreated:Put`, `:Copy`, `:CompleteMultipartUpload`, `ObjectRemoved:Delete`), with the
 * bucket and full object key; null for reads, parts, bucket calls and refusals.
 */
export function objectEventOf(r: Required<ProxiedS3Request>): { name: string; bucket: string; key: string } | null {
  if (r.status < 200 || r.status > 299) return null;
  const url = new URL(r.url, 'http://s3');
  const [, bucket = '', ...rest] = url.pathname.split('/');
  const key = decodeURIComponent(rest.join('/'));
  if (!bucket || !key) return null;
  const q = url.searchParams;
  if (r.method === 'PUT' && !q.has('partNumber') && !q.has('uploadId')) {
    return { name: r.headers['x-amz-copy-source'] ? 'ObjectCreated:Copy' : 'ObjectCreated:Put', bucket, key };
  }
  if (r.method === 'POST' && q.has('uploadId')) return { name: 'ObjectCreated:CompleteMultipartUpload', bucket, key };
  if (r.method === 'DELETE' && !q.has('uploadId')) return { name: 'ObjectRemoved:Delete', bucket, key };
  return null;
}

/** The bucket a path-style request created (CreateBucket answered 2xx), or null. */
export function createdBucketOf(r: Required<ProxiedS3Request>): string | null {
  if (r.method !== 'PUT' || r.status < 200 || r.status > 299) return null;
  const url = new URL(r.url, 'http://s3');
  const m = /^\/([^/]+)\/?$/.exec(url.pathname);
  return m?.[1] && url.search === '' ? decodeURIComponent(m[1]) : null;
}
