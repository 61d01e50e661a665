import type { AbuseReport, AbuseSink } from '../../ports/abuse-sink.js';

export { LogAbuseSink } from './log-abuse-sink.js';
export { WebhookAbuseSink, type WebhookOptions } from './webhook-abuse-sink.js';

/** Hands each report to every sink (the operator log, then the webhook's queue). */
export class FanoutAbuseSink implements AbuseSink {
  constructor(private readonly sinks: AbuseSink[]) {}
  async report(report: AbuseReport): Promise<void> {
    await Promise.all(this.sinks.map((s) => s.report(report)));
  }
  async close(): Promise<void> {
    await Promise.all(this.sinks.map((s) => s.close?.()));
  }
}
