import type { Writable } from 'node:stream';
import type { AbuseReport, AbuseSink } from '../../ports/abuse-sink.js';

/** One JSON line per report on the operator log: `{"kind":"abuse_report", ...the report}`. */
export class LogAbuseSink implements AbuseSink {
  constructor(private readonly out: Writable) {}
  async report(report: AbuseReport): Promise<void> {
    this.out.write(`${JSON.stringify({ kind: 'abuse_report', ...report })}\n`);
  }
}
