import { CairnError } from '../../core/errors.js';

/**
 * Errors from a dependency that is away, restarting, overloaded or full (PostgreSQL, the S3
 * server, the disk) are not Cairn's bugs and not the client's: they become a 503 with
 * Retry-After (or a 507 when storage is full), with a message that names the kind of dependency
 * and nothing of its internals. Everything else stays an unknown error (500, logged).
 */

export type Dependency = 'database' | 'blob_store' | 'disk' | 'network';

export interface DependencyFailure {
  dependency: Dependency;
  error: CairnError;
}

/** Seconds a client should wait: long enough for a restart or failover to finish. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;
/** Space is not freed in seconds. */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 60;

/** Socket-level failures: the peer is unreachable, refused, reset or silent. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Out of space: ENOSPC/EDQUOT from the file system, SQLITE_FULL, PostgreSQL's disk_full. */
const FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL', '53100']);

/**
 * PostgreSQL SQLSTATEs that say the server is away or shedding work, not that the statement is
 * wrong: connection exceptions (08xxx), admin/crash shutdown and "starting up" (57P01-57P03),
 * too many connections (53300), out of memory (53200), statement_timeout (57014) and
 * lock_timeout (55P03).
 */
function isPostgresUnavailable(code: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(code) || ['57P01', '57P02', '57P03', '53300', '53200', '57014', '55P03'].includes(code);
}

/** node-postgres reports a lost or unobtainable connection only in its message. */
const PG_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|not queryable|Query read timeout|Connection pool saturated|Database unreachable/;

/** AWS SDK errors carry `$metadata`; a 5xx or throttling answer means the store is struggling. */
const S3_UNAVAILABLE_NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'ThrottlingException',
]);

interface ErrorLike {
  code?: unknown;
  errno?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  severity?: unknown;
  $metadata?: { httpStatusCode?: number };
}

function* chain(err: unknown): Generator<ErrorLike> {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const e = queue.shift();
    if (typeof e !== 'object' || e === null || seen.has(e) || seen.size > 16) continue;
    seen.add(e);
    const like = e as ErrorLike;
    yield like;
    queue.push(like.cause);
    if (Array.isArray(like.errors)) queue.push(...like.errors);
  }
}

function classify(e: ErrorLike): Dependency | 'full' | null {
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (FULL_CODES.has(code)) return 'full';
  // pg's DatabaseError has a severity and a five-character SQLSTATE.
  if (typeof e.severity === 'string' && isPostgresUnavailable(code)) return 'database';
  if (PG_MESSAGES.test(message)) return 'database';
  if (e.$metadata !== undefined) {
    const status = e.$metadata.httpStatusCode;
    if ((status !== undefined && status >= 500) || S3_UNAVAILABLE_NAMES.has(String(e.name))) return 'blob_store';
    if (NETWORK_CODES.has(code) || status === undefined) return 'blob_store';
  }
  if (NETWORK_CODES.has(code)) return 'network';
  return null;
}

const MESSAGES: Record<Dependency, string> = {
  database: 'The metadata database is unavailable or too slow right now; retry shortly.',
  blob_store: 'The blob store is unavailable or too slow right now; retry shortly.',
  network: 'A storage service is unreachable right now; retry shortly.',
  disk: 'The server is out of storage space; nothing was stored. Retry once space is freed.',
};

/** The answer for a dependency failure anywhere in `err`'s causes, or null for any other error. */
export function dependencyFailure(err: unknown): DependencyFailure | null {
  let found: Dependency | null = null;
  for (const e of chain(err)) {
    const kind = classify(e);
    if (kind === 'full') {
      return {
        dependency: 'disk',
        error: new CairnError('server_error', MESSAGES.disk, {
          status: 507,
          retryAfterSeconds: STORAGE_FULL_RETRY_AFTER_SECONDS,
        }),
      };
    }
    // The most specific kind wins (an S3 error whose cause is ECONNREFUSED is the blob store's).
    if (kind !== null && (found === null || found === 'network')) found = kind;
  }
  if (found === null) return null;
  return {
    dependency: found,
    error: new CairnError('server_error', MESSAGES[found], {
      status: 503,
      retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS,
    }),
  };
}
