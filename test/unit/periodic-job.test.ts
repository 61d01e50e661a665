import { afterEach, describe, expect, it, vi } from 'vitest';
import { PeriodicJob } from '../../src/core/periodic-job.js';

describe('PeriodicJob', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs on its interval, one run at a time, and stop waits for the run in progress', async () => {
    vi.useFakeTimers();
    let runs = 0;
    let finish: () => void = () => {};
    const job = new PeriodicJob(() => {
      runs++;
      return new Promise<void>((resolve) => {
        finish = resolve;
      });
    });
    job.start(100);
    job.start(100); // a second start changes nothing
    await vi.advanceTimersByTimeAsync(350);
    expect(runs).toBe(1); // the ticks while the first run is under way are skipped
    finish();
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(2);
    let stopped = false;
    const stopping = job.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish();
    await stopping;
    await vi.advanceTimersByTimeAsync(500);
    expect(runs).toBe(2);
  });

  it('goes on after a run that fails, and never starts with a zero interval', async () => {
    vi.useFakeTimers();
    let runs = 0;
    const failing = new PeriodicJob(async () => {
      runs++;
      throw new Error('down');
    });
    failing.start(100);
    await vi.advanceTimersByTimeAsync(300);
    expect(runs).toBe(3);
    await failing.stop();
    const off = new PeriodicJob(async () => {
      runs++;
    });
    off.start(0);
    await vi.advanceTimersByTimeAsync(300);
    expect(runs).toBe(3);
  });
});
