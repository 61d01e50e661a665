import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { CoreObserver } from '../core/context.js';
import type { SweepReport } from '../core/sweeper.js';

/**
 * Every metric Cairn exports, on a registry of its own (several servers in one process, as in the
 * tests, do not share counts). Labels only ever hold values from small fixed sets: a listener
 * name, a route template (`/v1/artifacts/:id`, never the id), a method, a status, an error code
 * or a dependency kind; never a tenant, key, id or raw URL, so the number of series is bounded.
 */
export type ListenerName = 'api' | 'viewer' | 'content';

/** What the metrics read at scrape time from the parts that keep their own state. */
export interface MetricSources {
  /** PostgreSQL pool: open and idle connections, calls waiting for one; absent on SQLite. */
  poolStats?: () => { total: number; idle: number; waiting: number; shed: number };
  /** Uploads being received right now (all tenants). */
  uploadsInFlight?: () => number;
  /** 1 while the shared rate limiter's Redis is unreachable (per-instance fallback in use). */
  rateLimiterDegraded?: () => boolean;
}

export class CairnMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'listener' | 'route' | 'method' | 'status'>;
  private readonly duration: Histogram<'listener' | 'route' | 'method'>;
  private readonly served: Counter<'listener'>;
  private readonly uploaded: Counter;
  private readonly refusals: Counter<'reason'>;
  private readonly dependencyFailures: Counter<'dependency'>;
  private readonly sweeps: Counter<'outcome'>;
  private readonly swept: Counter<'kind'>;
  private readonly sweepSeconds: Histogram;

  constructor(sources: MetricSources = {}) {
    const registers = [this.registry];
    // Process metrics (CPU, RSS, heap, open files) and event-loop lag, under their usual names.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
    this.requests = new Counter({
      name: 'cairn_http_requests_total',
      help: 'HTTP requests answered, by listener, route template, method and status.',
      labelNames: ['listener', 'route', 'method', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'cairn_http_request_duration_seconds',
      help: 'Time from a request arriving to its response being written.',
      labelNames: ['listener', 'route', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.served = new Counter({
      name: 'cairn_bytes_served_total',
      help: 'Bytes of response bodies with a known length (downloads, pages, JSON).',
      labelNames: ['listener'],
      registers,
    });
    this.uploaded = new Counter({
      name: 'cairn_bytes_uploaded_total',
      help: 'Bytes of newly stored artifacts (idempotent replays not counted again).',
      registers,
    });
    this.refusals = new Counter({
      name: 'cairn_refusals_total',
      help: 'Requests refused by a limit: rate_limited (429) or quota_exceeded (403).',
      labelNames: ['reason'],
      registers,
    });
    this.dependencyFailures = new Counter({
      name: 'cairn_dependency_failures_total',
      help: 'Requests answered 503/507 because a dependency was away, slow or full.',
      labelNames: ['dependency'],
      registers,
    });
    this.sweeps = new Counter({
      name: 'cairn_sweeper_runs_total',
      help: 'Scheduled sweeper runs, by outcome (ok or failed).',
      labelNames: ['outcome'],
      registers,
    });
    this.swept = new Counter({
      name: 'cairn_sweeper_removed_total',
      help: 'What sweeper runs removed or marked, by kind (expired, purged, blobs_deleted, ...).',
      labelNames: ['kind'],
      registers,
    });
    this.sweepSeconds = new Histogram({
      name: 'cairn_sweeper_run_duration_seconds',
      help: 'Duration of scheduled sweeper runs.',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
      registers,
    });
    const { poolStats, uploadsInFlight, rateLimiterDegraded } = sources;
    new Gauge({
      name: 'cairn_uploads_in_flight',
      help: 'Uploads being received right now.',
      registers,
      collect() {
        this.set(uploadsInFlight?.() ?? 0);
      },
    });
    if (poolStats) {
      new Gauge({
        name: 'cairn_db_pool_connections',
        help: 'PostgreSQL pool: connections open (total) and idle, and calls waiting for one.',
        labelNames: ['state'],
        registers,
        collect() {
          const s = poolStats();
          this.set({ state: 'total' }, s.total);
          this.set({ state: 'idle' }, s.idle);
          this.set({ state: 'waiting' }, s.waiting);
        },
      });
      let counted = 0;
      new Counter({
        name: 'cairn_db_pool_shed_total',
        help: 'Calls refused at once (503) because too many already waited for a PostgreSQL connection.',
        registers,
        collect() {
          const { shed } = poolStats();
          if (shed > counted) this.inc(shed - counted);
          counted = shed;
        },
      });
    }
    if (rateLimiterDegraded) {
      new Gauge({
        name: 'cairn_rate_limiter_degraded',
        help: '1 while Redis is unreachable and rate limits are enforced per instance.',
        registers,
        collect() {
          this.set(rateLimiterDegraded() ? 1 : 0);
        },
      });
    }
  }

  request(listener: ListenerName, route: string, method: string, status: number, seconds: number, bytes: number): void {
    this.requests.inc({ listener, route, method, status: String(status) });
    this.duration.observe({ listener, route, method }, seconds);
    if (bytes > 0) this.served.inc({ listener }, bytes);
  }

  refused(reason: 'rate_limited' | 'quota_exceeded'): void {
    this.refusals.inc({ reason });
  }

  dependencyFailed(dependency: string): void {
    this.dependencyFailures.inc({ dependency });
  }

  /** The core's events (uploads stored, sweeper runs). */
  readonly observer: CoreObserver = {
    uploadStored: (sizeBytes) => this.uploaded.inc(sizeBytes),
    sweepFinished: (report, seconds) => this.sweepFinished(report, seconds),
  };

  private sweepFinished(report: SweepReport | null, seconds: number): void {
    this.sweeps.inc({ outcome: report ? 'ok' : 'failed' });
    this.sweepSeconds.observe(seconds);
    if (!report) return;
    const kinds: Record<string, number> = {
      expired: report.expired,
      purged: report.purged,
      orphans_marked: report.orphansMarked,
      blobs_deleted: report.blobsDeleted,
      idempotency_purged: report.idempotencyPurged,
      links_purged: report.linksPurged,
      pending_purged: report.pendingPurged,
      resumables_purged: report.resumablesPurged,
      landings_swept: report.landingsSwept,
      staging_swept: report.stagingSwept,
      events_purged: report.eventsPurged,
      deliveries_purged: report.deliveriesPurged,
      mcp_sessions_purged: report.mcpSessionsPurged,
    };
    for (const [kind, n] of Object.entries(kinds)) this.swept.inc({ kind }, n);
  }
}
