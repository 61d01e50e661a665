import { visible } from '../terminal-text.js';
import { formatBytes } from './format.js';

/** Transfers at least this large get a progress bar (when stderr is a terminal). */
export const PROGRESS_THRESHOLD_BYTES = 4 * 1024 * 1024;

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string): unknown;
}

export interface Progress {
  update(done: number, total?: number | null): void;
  /** Draws the final state and ends the line. */
  finish(): void;
  /**
   * Ends the line with `note` in place of the rate, keeping the bytes actually sent: for a
   * transfer the server answered before it was complete (a replayed push), whose rate would be
   * the file's size over a few milliseconds.
   */
  stop(note: string): void;
  /** Clears the line (after a failure, so the error message starts clean). */
  abort(): void;
}

/** The widest a size is ("99.9 MB", formatBytes) and an ETA below ten hours ("9:59:59"). */
const BYTES_WIDTH = 7;
const ETA_WIDTH = 7;

const NO_PROGRESS: Progress = { update() {}, finish() {}, stop() {}, abort() {} };

/** A bar for one transfer, or a no-op when it is small or nobody is watching stderr. */
export function createProgress(
  label: string,
  totalBytes: number | null,
  stream: ProgressStream = process.stderr,
  now: () => number = Date.now,
): Progress {
  if (!stream.isTTY || totalBytes === null || totalBytes <= PROGRESS_THRESHOLD_BYTES) return NO_PROGRESS;
  return new ProgressBar(label, totalBytes, stream, now);
}

/** Redraws at most ten times a second: `label [#####-----]  42%  12.0 MB/29.1 MB  4.1 MB/s  ETA 0:04`. */
export class ProgressBar implements Progress {
  private done = 0;
  /** The first count reported: a resumed upload starts part way, and the rate is this run's alone. */
  private from: number | null = null;
  private lastDraw = 0;
  private readonly started: number;

  private readonly label: string;

  constructor(
    label: string,
    private total: number,
    private readonly stream: ProgressStream,
    private readonly now: () => number = Date.now,
  ) {
    // A file's name, written where the bar is: escaped like all the CLI's output (terminal-text.ts).
    this.label = visible(label);
    this.started = now();
  }

  update(done: number, total?: number | null): void {
    this.done = done;
    this.from ??= done;
    if (typeof total === 'number' && total > 0) this.total = total;
    const t = this.now();
    if (t - this.lastDraw < 100 && done < this.total) return;
    this.lastDraw = t;
    this.stream.write(`\r${this.render(t)}\u001b[K`);
  }

  finish(): void {
    this.done = Math.max(this.done, this.total);
    this.stream.write(`\r${this.render(this.now())}\u001b[K\n`);
  }

  stop(note: string): void {
    const line = `${this.label}  ${visible(note)}; stopped after ${formatBytes(this.done)} of ${formatBytes(this.total)}`;
    this.stream.write(`\r${this.fit(line)}\u001b[K\n`);
  }

  abort(): void {
    this.stream.write('\r\u001b[2K');
  }

  /**
   * One line, cut to the terminal width. Its fields have fixed widths (the bar takes what they
   * leave), so the bar does not change length while the rate and the ETA change digits.
   */
  render(at: number): string {
    const fraction = this.total > 0 ? Math.min(1, this.done / this.total) : 0;
    const seconds = Math.max((at - this.started) / 1000, 0.001);
    const rate = (this.done - (this.from ?? 0)) / seconds;
    const eta = rate > 0 ? (this.total - this.done) / rate : Number.POSITIVE_INFINITY;
    const totalText = formatBytes(this.total);
    const tail = [
      `${String(Math.floor(fraction * 100)).padStart(3)}%`,
      `${formatBytes(this.done).padStart(BYTES_WIDTH)}/${totalText.padEnd(BYTES_WIDTH)}`,
      `${formatBytes(rate)}/s`.padStart(BYTES_WIDTH + 2),
      `ETA ${formatEta(fraction >= 1 ? 0 : eta).padEnd(ETA_WIDTH)}`,
    ].join('  ');
    const width = this.stream.columns || 80;
    const barWidth = Math.max(10, Math.min(30, width - 1 - this.label.length - tail.length - 4));
    const filled = Math.round(fraction * barWidth);
    return this.fit(`${this.label} [${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}] ${tail}`.trimEnd());
  }

  private fit(line: string): string {
    const width = this.stream.columns || 80;
    return line.length > width - 1 ? line.slice(0, width - 1) : line;
  }
}

/** m:ss or h:mm:ss; "--:--" while the rate is still unknown. */
export function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}
