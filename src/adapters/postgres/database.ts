import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

/** Anything that runs a query: the database (autocommit) or a client inside a transaction. */
export interface Querier {
  query(config: pg.QueryConfig | string): Promise<pg.QueryResult>;
}

/**
 * int8 (our milliseconds, bytes and counts) read as numbers: pg's string is for values past 2^53,
 * which ours never reach. Set per pool, never on the global `pg.types`.
 */
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => {
    if (oid === pg.types.builtins.INT8) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  }) as pg.CustomTypesConfig['getTypeParser'],
};

/** A schema name we can put in a startup option and in DDL without quoting games. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`Invalid PostgreSQL schema name '${schema}': use [a-z_][a-z0-9_]*.`);
  return schema;
}

export interface PoolOptions {
  /** `postgres://user:password@host:5432/database` (any libpq-style URL pg accepts). */
  connectionString: string;
  /** A schema for every table (created by `migrate()`), e.g. for several deployments in one database. */
  schema?: string;
  /** Pool size per instance (default 10). */
  maxConnections?: number;
  /**
   * Bounds on a slow or unreachable server, so a request fails (503) instead of hanging: a longer
   * statement is cancelled by PostgreSQL and, should the server go silent, by the client 2 s
   * later; a connection not had within `connectTimeoutMs` fails the call. Unset: no bound.
   */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** Calls that may wait for a pooled connection at once; more are refused at once (load shedding). */
  maxWaiting?: number;
}

export function clientConfig(options: PoolOptions): pg.PoolConfig {
  const config: pg.PoolConfig = { connectionString: options.connectionString, types: TYPES };
  // Startup parameters, so every connection of the pool (and every reconnect) has them before
  // its first query; a SET on 'connect' would race the first query.
  const startup: string[] = [];
  if (options.schema !== undefined) startup.push(`-c search_path=${checkSchemaName(options.schema)}`);
  if (options.statementTimeoutMs !== undefined) {
    startup.push(`-c statement_timeout=${Math.floor(options.statementTimeoutMs)}`);
    config.query_timeout = options.statementTimeoutMs + 2_000;
  }
  if (startup.length > 0) config.options = startup.join(' ');
  if (options.connectTimeoutMs !== undefined) config.connectionTimeoutMillis = options.connectTimeoutMs;
  if (options.maxConnections !== undefined) config.max = options.maxConnections;
  return config;
}

/** The message src/http/errors/dependency.ts recognises as "the database is saturated". */
export const POOL_SATURATED = 'Connection pool saturated: too many calls waiting for a database connection';

/** The message src/http/errors/dependency.ts recognises as "no connection to the database". */
export const DATABASE_UNREACHABLE = 'Database unreachable: no connection to PostgreSQL';
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
]);

/**
 * A socket error on the way to PostgreSQL (a refused connect while it is stopped) says nothing of
 * which service failed; named here, where it is known, it is reported as the database's failure
 * rather than as some storage service's network trouble.
 */
function named<T>(call: Promise<T>): Promise<T> {
  return call.catch((err: unknown) => {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && SOCKET_CODES.has(code)) {
      // The socket's own words (`connect ECONNREFUSED 10.0.0.5:5432`) tell an operator which address failed.
      throw new Error(`${DATABASE_UNREACHABLE} (${(err as Error).message})`, { cause: err });
    }
    throw err;
  });
}

/** Deadlock and serialization failures: the transaction did nothing and may simply run again. */
const RETRYABLE = new Set(['40P01', '40001']);

export function isRetryable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && RETRYABLE.has((err as { code?: string }).code ?? '');
}

export class Database {
  readonly pool: pg.Pool;
  /** Calls refused so far because too many waited for a connection (see admit). */
  shed = 0;
  private readonly maxWaiting: number;
  private closed = false;

  constructor(options: PoolOptions) {
    this.pool = new pg.Pool(clientConfig(options));
    this.maxWaiting = options.maxWaiting ?? Number.POSITIVE_INFINITY;
    // An idle client that loses its server emits here; without a listener the process would crash.
    this.pool.on('error', () => {});
  }

  /**
   * Refuses a call outright once `maxWaiting` calls already wait for a connection: under a slow
   * database the queue (and the memory of the requests in it) stays bounded, and the refused
   * requests get a 503 at once rather than after the connect timeout.
   */
  private admit(): void {
    if (this.pool.waitingCount < this.maxWaiting) return;
    this.shed++;
    throw new Error(POOL_SATURATED);
  }

  /** One statement on a pooled connection, outside any transaction. */
  async query(config: pg.QueryConfig | string): Promise<pg.QueryResult> {
    this.admit();
    return named(this.pool.query(config));
  }

  /**
   * Runs `fn` in a READ COMMITTED transaction. Writers take row locks in a fixed order
   * (idempotency key, session, blob, tenant), so deadlocks are rare; when one happens anyway
   * (sweepers touching many rows) the whole unit is rolled back and run again.
   *
   * While checked out, pg-pool listens to none of a client's errors, so a connection that drops
   * between two statements (a restart, a terminated backend) would emit an unhandled 'error' and
   * end the process; here it is noted instead, the next statement fails (503), and the client is
   * destroyed on release rather than reused, as is one whose rollback failed.
   */
  async tx<T>(fn: (q: Querier) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      this.admit();
      const client = await named(this.pool.connect());
      let broken: Error | undefined;
      const onError = (err: Error) => {
        broken ??= err;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(onError);
        if (isRetryable(err) && attempt < 5) {
          await sleep(5 + Math.random() * 20 * attempt);
          continue;
        }
        throw err;
      } finally {
        client.removeListener('error', onError);
        client.release(broken);
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
