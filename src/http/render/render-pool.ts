import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { RenderJob } from './render-job.js';
import { startWorker } from './start-worker.js';

/** A rendered document, or why there is none: it took too long, or too many renders were waiting. */
export type RenderOutcome = { doc: string } | { refused: 'timed_out' | 'busy' };

export interface RenderPoolOptions {
  /** Worker threads; default one for each core beyond the first, at least 1 and at most 2. */
  workers?: number;
  /** A render running longer than this is stopped: its worker is ended (and replaced when needed). */
  timeLimitMs?: number;
  /** Renders waiting for a worker; past this, a render is refused at once as busy. */
  maxWaiting?: number;
}

/** Default bound of one render: a hostile 2 MiB Markdown file takes about 10 s on one busy core. */
export const RENDER_TIME_LIMIT_MS = 20_000;
export const RENDER_MAX_WAITING = 64;

const ENTRY = new URL(`./render-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

interface Task {
  job: RenderJob;
  resolve(outcome: RenderOutcome): void;
  reject(err: Error): void;
}

/**
 * Renders documents (text previews, Markdown pages) on worker threads, so that rendering a large
 * or hostile file never holds the event loop, where every request of the process waits for it.
 * Workers start on first use and never keep the process alive; each runs one render at a time.
 */
export class RenderPool {
  private readonly size: number;
  private readonly timeLimitMs: number;
  private readonly maxWaiting: number;
  private readonly idle: Worker[] = [];
  private readonly busy = new Set<Worker>();
  private readonly waiting: Task[] = [];
  private nextId = 0;
  private closed = false;

  constructor(opts: RenderPoolOptions = {}) {
    this.size = opts.workers ?? Math.max(1, Math.min(2, availableParallelism() - 1));
    this.timeLimitMs = opts.timeLimitMs ?? RENDER_TIME_LIMIT_MS;
    this.maxWaiting = opts.maxWaiting ?? RENDER_MAX_WAITING;
  }

  render(job: RenderJob): Promise<RenderOutcome> {
    if (this.closed) return Promise.reject(new Error('The render pool is closed.'));
    if (this.waiting.length >= this.maxWaiting) return Promise.resolve({ refused: 'busy' });
    return new Promise((resolve, reject) => {
      this.waiting.push({ job, resolve, reject });
      this.dispatch();
    });
  }

  /** Ends every worker; renders waiting or running fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.waiting.splice(0)) task.reject(new Error('The render pool is closed.'));
    await Promise.all([...this.idle.splice(0), ...this.busy].map((w) => w.terminate()));
  }

  private dispatch(): void {
    while (this.waiting.length > 0 && !this.closed) {
      const worker = this.idle.pop() ?? (this.busy.size < this.size ? this.spawn() : undefined);
      if (!worker) return;
      this.run(worker, this.waiting.shift() as Task);
    }
  }

  private spawn(): Worker {
    const worker = startWorker(ENTRY);
    worker.unref();
    return worker;
  }

  private run(worker: Worker, task: Task): void {
    this.busy.add(worker);
    const id = ++this.nextId;
    const done = (reusable: boolean, settle: () => void) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      this.busy.delete(worker);
      if (reusable && !this.closed) this.idle.push(worker);
      else void worker.terminate();
      settle();
      this.dispatch();
    };
    let timer: NodeJS.Timeout | undefined;
    const onMessage = (m: { id: number; started?: boolean; doc?: string; error?: string }) => {
      if (m.id !== id) return;
      if (m.started) {
        timer = setTimeout(() => done(false, () => task.resolve({ refused: 'timed_out' })), this.timeLimitMs);
      } else if (m.doc !== undefined) done(true, () => task.resolve({ doc: m.doc as string }));
      else done(true, () => task.reject(new Error(`A render failed: ${m.error}`)));
    };
    const onError = (err: Error) => done(false, () => task.reject(err));
    const onExit = () => done(false, () => task.reject(new Error('A render worker stopped.')));
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
    worker.postMessage({ id, job: task.job });
  }
}
