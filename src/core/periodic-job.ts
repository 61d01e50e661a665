/**
 * A background job run every `intervalMs`: one run at a time (a tick while one runs is skipped),
 * on an unref'd timer that never holds a process open, and a stop that waits for the run in
 * progress. `run` handles its own failures (logs, metrics); one that rejects is dropped.
 */
export class PeriodicJob {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(private readonly run: () => Promise<unknown>) {}

  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.run()
        .catch(() => {})
        .finally(() => {
          this.running = null;
        });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
