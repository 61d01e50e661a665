/**
 * Peak resident set size of this process, sampled on a timer. A streaming upload yields to the
 * event loop between chunks, so a 50 ms timer sees the peak of any buffering that matters.
 */
export class RssSampler {
  private base = process.memoryUsage.rss();
  private peak = this.base;
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs: number) {
    this.timer = setInterval(() => {
      const now = process.memoryUsage.rss();
      if (now > this.peak) this.peak = now;
    }, intervalMs);
    this.timer.unref();
  }

  /** Starts a new measurement from the current RSS (after a collection, when exposed). */
  reset(): { baseBytes: number } {
    globalThis.gc?.();
    this.base = process.memoryUsage.rss();
    this.peak = this.base;
    return { baseBytes: this.base };
  }

  read(): { baseBytes: number; peakBytes: number; growthBytes: number } {
    const now = process.memoryUsage.rss();
    if (now > this.peak) this.peak = now;
    return { baseBytes: this.base, peakBytes: this.peak, growthBytes: this.peak - this.base };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
