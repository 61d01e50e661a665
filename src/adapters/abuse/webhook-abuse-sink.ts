import type { AbuseReport, AbuseSink } from '../../ports/abuse-sink.js';

export interface WebhookOptions {
  /** One delivery's time limit; a slower webhook is abandoned and the failure logged. */
  timeoutMs?: number;
  /** Reports waiting for delivery; beyond this, new ones are dropped (and logged) rather than queued. */
  maxQueued?: number;
  /** Deliveries in flight at once. */
  concurrency?: number;
}

/**
 * POSTs each report as JSON to an operator webhook, in the background: `report` only queues, so
 * a slow or failing webhook never delays the reporter's 202. The queue is bounded so a flood
 * cannot grow memory; failures, timeouts and drops are logged through `warn`, never thrown (the
 * report itself is already on the operator log).
 */
export class WebhookAbuseSink implements AbuseSink {
  private readonly timeoutMs: number;
  private readonly maxQueued: number;
  private readonly concurrency: number;
  private readonly queue: AbuseReport[] = [];
  private inFlight = 0;
  private closed = false;
  private readonly shutdown = new AbortController();
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly url: string,
    private readonly warn: (message: string) => void,
    opts: WebhookOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.maxQueued = opts.maxQueued ?? 1000;
    this.concurrency = opts.concurrency ?? 4;
  }

  async report(report: AbuseReport): Promise<void> {
    if (this.closed || this.queue.length >= this.maxQueued) {
      const why = this.closed ? 'is shutting down' : `has ${this.maxQueued} reports queued`;
      this.warn(`abuse webhook ${why}; the report on ${report.slug} is only in the operator log`);
      return;
    }
    this.queue.push(report);
    this.pump();
  }

  /** Resolves once nothing is queued or in flight. */
  idle(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Takes no more reports; waits up to `graceMs` for the queue, then abandons what is left. */
  async close(graceMs = this.timeoutMs): Promise<void> {
    this.closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    const abandoned = this.queue.splice(0).length + this.inFlight;
    if (abandoned > 0) {
      this.warn(`abuse webhook: ${abandoned} report(s) not delivered at shutdown (they are in the operator log)`);
      this.shutdown.abort();
      await this.idle();
    }
  }

  private pump(): void {
    while (this.inFlight < this.concurrency && this.queue.length > 0) {
      const next = this.queue.shift() as AbuseReport;
      this.inFlight++;
      void this.deliver(next).finally(() => {
        this.inFlight--;
        this.pump();
        if (this.inFlight === 0 && this.queue.length === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      });
    }
  }

  private async deliver(report: AbuseReport): Promise<void> {
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(report),
        signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.shutdown.signal]),
      });
      await res.body?.cancel();
      if (!res.ok) this.warn(`abuse webhook answered ${res.status} to the report on ${report.slug}`);
    } catch (err) {
      const cause = (err as { cause?: unknown }).cause;
      const why =
        err instanceof Error
          ? `${err.name}: ${err.message}${cause instanceof Error ? ` (${cause.message})` : ''}`
          : String(err);
      this.warn(`abuse webhook failed for the report on ${report.slug}: ${why}`);
    }
  }
}
