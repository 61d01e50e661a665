import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * SHA-256 of a large stream, computed on a worker thread.
 *
 * Why: hashing was the largest single cost of a large upload on the event loop (29 % of the
 * server's CPU for a 1 GiB presigned PUT on a CPU with SHA extensions; one without them hashes
 * several times slower), and while it ran no other request was served. Here the event loop only
 * copies each chunk into one of a few 1 MiB slots and transfers the full slot to a worker, which
 * hashes it and transfers it back. Chunks stay in order because one worker hashes all of a
 * stream's slots, in the order they were posted.
 *
 * Why transferred ArrayBuffers rather than a SharedArrayBuffer: V8 copies into shared memory with
 * word-by-word relaxed atomic moves (`relaxed_memmove`), not memcpy; with shared slots that copy
 * was 15 % of a server's CPU during a 1 GiB PUT. A transfer moves the buffer, it copies nothing.
 *
 * Workers are started on first use (a few per process, each serving several streams), are
 * referenced only while they have streams (an idle one does not keep the process alive), and a
 * worker that dies fails the streams it had; the next stream starts a new one.
 */

/** Bytes per slot: each post hashes this much, so the message overhead is per MiB, not per chunk. */
const SLOT_BYTES = 1024 * 1024;
/** Slots per stream: at most this much of a stream waits to be hashed before the source is held back. */
const SLOTS_PER_STREAM = 4;
/** Slot sets kept between streams (shared memory is allocated once, not per upload). */
const KEPT_SLOT_SETS = 4;
/** One core is the event loop's; the others may hash (up to four workers). */
const MAX_WORKERS = Math.max(1, Math.min(4, availableParallelism() - 1));

/**
 * The worker's program. Plain JavaScript evaluated as is, so that the same text runs from the
 * TypeScript sources (tests) and from the build; `import()` rather than `require`, because an
 * evaluated worker takes the process's flags and `--input-type=module` makes it a module (the
 * port keeps messages until the listener is added). Messages: `open` (a stream's hash), `data`
 * (hash the first `len` bytes of the transferred slot `buf`, then transfer it back with `free`),
 * `end` (answer `digest`), `abort` (drop the stream, answer `closed`). Every slot goes back, that
 * of a stream it does not know (aborted) too, unhashed; such a stream's other messages are
 * answered `closed` and never thrown on: that would end the worker and every other stream on it.
 */
const WORKER_SOURCE = `
(async () => {
  const { parentPort } = await import('node:worker_threads');
  const { createHash } = await import('node:crypto');
  const streams = new Map();
  parentPort.on('message', (m) => {
    if (m.op === 'open') {
      streams.set(m.id, createHash('sha256'));
    } else if (m.op === 'data') {
      streams.get(m.id)?.update(new Uint8Array(m.buf, 0, m.len));
      parentPort.postMessage({ op: 'free', id: m.id, slot: m.slot, buf: m.buf }, [m.buf]);
    } else if (m.op === 'end' && streams.has(m.id)) {
      const hash = streams.get(m.id);
      streams.delete(m.id);
      parentPort.postMessage({ op: 'digest', id: m.id, hex: hash.digest('hex') });
    } else {
      streams.delete(m.id);
      parentPort.postMessage({ op: 'closed', id: m.id });
    }
  });
})();
`;

type Reply =
  | { op: 'free'; id: number; slot: number; buf: ArrayBuffer }
  | { op: 'digest'; id: number; hex: string }
  | { op: 'closed'; id: number };

/** What a worker tells one of its streams. */
interface StreamEnd {
  /** Slot `slot` is back (hashed), as `buf`. */
  free(slot: number, buf: ArrayBuffer): void;
  /** The stream is over on the worker's side (digest or abort answered): its slots are unused. */
  closed(hex: string | null): void;
  fail(err: Error): void;
}

class HashWorker {
  private readonly worker = new Worker(WORKER_SOURCE, { eval: true });
  private readonly streams = new Map<number, StreamEnd>();

  constructor(private readonly gone: (w: HashWorker) => void) {
    this.worker.unref();
    this.worker.on('message', (m: Reply) => {
      const stream = this.streams.get(m.id);
      if (m.op === 'free') return stream?.free(m.slot, m.buf);
      this.forget(m.id);
      stream?.closed(m.op === 'digest' ? m.hex : null);
    });
    const died = (err: Error) => {
      this.gone(this);
      const streams = [...this.streams.values()];
      this.streams.clear();
      for (const s of streams) s.fail(err);
    };
    this.worker.on('error', died);
    this.worker.on('exit', (code) => died(new Error(`The hashing worker exited (code ${code}).`)));
  }

  get load(): number {
    return this.streams.size;
  }

  open(id: number, end: StreamEnd): void {
    // Referenced while it has streams: a process waiting only for a digest must not exit.
    if (this.streams.size === 0) this.worker.ref();
    this.streams.set(id, end);
    this.worker.postMessage({ op: 'open', id });
  }

  /** Transfers slot `slot` (`buf`, whose first `len` bytes are to be hashed) to the worker. */
  postSlot(id: number, slot: number, buf: ArrayBuffer, len: number): void {
    this.worker.postMessage({ op: 'data', id, slot, buf, len }, [buf]);
  }

  post(message: { op: 'end' | 'abort'; id: number }): void {
    this.worker.postMessage(message);
  }

  /** Ends the worker; its streams fail (see `died`). */
  async stop(): Promise<void> {
    await this.worker.terminate();
  }

  private forget(id: number): void {
    this.streams.delete(id);
    if (this.streams.size === 0) this.worker.unref();
  }
}

const workers: HashWorker[] = [];
const keptSlotSets: ArrayBuffer[][] = [];
let nextId = 1;

/** The least busy worker, or a new one while every worker has a stream and there is room for one more. */
function pickWorker(): HashWorker {
  let best: HashWorker | undefined;
  for (const w of workers) if (!best || w.load < best.load) best = w;
  if (best && (best.load === 0 || workers.length >= MAX_WORKERS)) return best;
  const created = new HashWorker((dead) => {
    const at = workers.indexOf(dead);
    if (at >= 0) workers.splice(at, 1);
  });
  workers.push(created);
  return created;
}

/** Streams being hashed off the event loop right now (for tests and diagnostics). */
export function openOffThreadHashes(): number {
  return workers.reduce((n, w) => n + w.load, 0);
}

/**
 * Ends every worker now; streams they were hashing fail. Nothing needs to call it (idle workers
 * do not keep the process alive); it is there for a process that wants its threads gone.
 */
export async function stopHashWorkers(): Promise<void> {
  await Promise.all(workers.map((w) => w.stop()));
}

export class OffThreadSha256 {
  private readonly id = nextId++;
  private readonly worker = pickWorker();
  /** The stream's slots; one being hashed is detached here (transferred) until `free` brings it back. */
  private readonly slots: ArrayBuffer[];
  private readonly views: Buffer[];
  private readonly freeSlots: number[];
  private slot: number;
  private filled = 0;
  private failure: Error | null = null;
  /** Waiting for a slot to come back (all are being hashed). */
  private waiting: { resolve(): void; reject(err: Error): void } | null = null;
  private finished: { resolve(hex: string | null): void; reject(err: Error): void } | null = null;
  private over = false;
  private aborted = false;

  constructor() {
    this.slots = keptSlotSets.pop() ?? Array.from({ length: SLOTS_PER_STREAM }, () => new ArrayBuffer(SLOT_BYTES));
    this.views = this.slots.map((s) => Buffer.from(s));
    this.freeSlots = this.slots.map((_, i) => i).reverse();
    this.slot = this.freeSlots.pop() as number;
    this.worker.open(this.id, {
      free: (slot, buf) => {
        this.slots[slot] = buf;
        this.views[slot] = Buffer.from(buf);
        this.freeSlots.push(slot);
        const w = this.waiting;
        this.waiting = null;
        w?.resolve();
      },
      closed: (hex) => {
        this.over = true;
        // Every slot is back by now (the worker answers `closed` after the `free` of each slot sent
        // before); a set missing one (detached, byteLength 0) is not kept all the same.
        const whole = this.slots.every((buf) => buf.byteLength === SLOT_BYTES);
        if (whole && keptSlotSets.length < KEPT_SLOT_SETS) keptSlotSets.push(this.slots);
        this.finished?.resolve(hex);
      },
      fail: (err) => {
        this.over = true;
        this.failure = err;
        this.waiting?.reject(err);
        this.finished?.reject(err);
      },
    });
  }

  /**
   * Copies `chunk` in; resolves once all of it is in a slot (at once unless every slot is still
   * being hashed). The chunk itself is not kept.
   */
  async update(chunk: Buffer): Promise<void> {
    for (let at = 0; at < chunk.length; ) {
      if (this.failure) throw this.failure;
      if (this.over || this.aborted) throw new Error('The hash was finished or aborted.');
      const copied = chunk.copy(this.views[this.slot] as Buffer, this.filled, at);
      this.filled += copied;
      at += copied;
      if (this.filled === SLOT_BYTES) await this.postSlot();
    }
  }

  /** Lowercase hex SHA-256 of everything given to `update`. Call once, after the last update. */
  async digest(): Promise<string> {
    if (this.failure) throw this.failure;
    if (this.filled > 0) this.transferSlot();
    const hex = await this.whenClosed({ op: 'end', id: this.id });
    if (hex === null) throw new Error('The hash was aborted.');
    return hex;
  }

  /** Drops the stream (an upload that failed): the worker forgets it, and its slots are reused. */
  abort(): void {
    if (this.over || this.finished) return;
    this.aborted = true;
    this.whenClosed({ op: 'abort', id: this.id }).catch(() => {});
  }

  private whenClosed(message: { op: 'end' | 'abort'; id: number }): Promise<string | null> {
    return new Promise((resolve, reject) => {
      this.finished = { resolve, reject };
      this.worker.post(message);
    });
  }

  private transferSlot(): void {
    this.worker.postSlot(this.id, this.slot, this.slots[this.slot] as ArrayBuffer, this.filled);
    this.filled = 0;
  }

  /** Hands the full slot to the worker and takes a free one, waiting for one if none is free. */
  private async postSlot(): Promise<void> {
    this.transferSlot();
    while (this.freeSlots.length === 0) {
      await new Promise<void>((resolve, reject) => {
        this.waiting = { resolve, reject };
      });
    }
    if (this.aborted) throw new Error('The hash was finished or aborted.');
    this.slot = this.freeSlots.pop() as number;
  }
}
