/**
 * A few large I/O buffers of one size, kept from one transfer for the next.
 *
 * Why: a buffer that lives as long as a large transfer outlives two minor collections and moves to
 * V8's old generation; once the transfer ends it is garbage that only a full collection frees, and
 * until then it counts toward V8's external-memory limit. Each 1 GiB upload left about 8 MiB of
 * such buffers (the upload sink's), each large download 4 MiB (its read buffers). Past that limit
 * V8 runs a full collection for "external memory pressure", and the heap limits it leaves for a
 * heap of Cairn's size (about 27 MB) can keep V8 marking without pause while transfers go on:
 * 24–38 full collections and about 1.8 s more CPU per GiB uploaded. With the shelves a 1 GiB
 * upload leaves about 0.25 MiB, and in a series of uploads that collection came after 14
 * uploads instead of 3 to 5 (docs/benchmarks.md, round 6). Buffers taken from a shelf are
 * allocated once per process.
 *
 * A buffer given back must be one nothing will read or write any more; its old bytes stay in it,
 * so a taker must only ever use the bytes it wrote itself.
 *
 * With `alignedSlots`, up to that many buffers are page-aligned, so that a file opened with
 * O_DIRECT can be written from them (see DurableFileSink): each is a WebAssembly memory of its
 * own, which starts on a page, made when first needed. They always come back to the shelf and are
 * handed out first; once all are in use, `take` hands out ordinary buffers. (One memory sliced
 * for all of them, made up front, set off a run of V8 full collections during the first large
 * upload in half of the tries; made one by one as needed, none. Each memory reserves about
 * 10 GiB of address space, not memory, which is why there are few.)
 */
export class BufferShelf {
  private readonly kept: Buffer[] = [];
  /** The aligned buffers not in use, and the memories of all of them. */
  private readonly alignedFree: Buffer[] = [];
  private readonly alignedMemories = new Set<ArrayBuffer>();

  constructor(
    readonly size: number,
    private readonly max: number,
    private alignedSlots = 0,
  ) {}

  take(): Buffer {
    return this.alignedFree.pop() ?? this.newAligned() ?? this.kept.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  private newAligned(): Buffer | null {
    if (this.alignedMemories.size >= this.alignedSlots) return null;
    const memory = alignedMemory(this.size);
    if (!memory) {
      // None to be had (no WebAssembly, or no address space left): ordinary buffers from now on.
      this.alignedSlots = this.alignedMemories.size;
      return null;
    }
    this.alignedMemories.add(memory);
    return Buffer.from(memory, 0, this.size);
  }

  give(buffer: Buffer): void {
    if (this.isAligned(buffer)) {
      if (!this.alignedFree.includes(buffer)) this.alignedFree.push(buffer);
      return;
    }
    if (buffer.length === this.size && this.kept.length < this.max && !this.kept.includes(buffer)) {
      this.kept.push(buffer);
    }
  }

  /** Whether `buffer` is one of this shelf's page-aligned buffers. */
  isAligned(buffer: Buffer): boolean {
    return this.alignedMemories.has(buffer.buffer as ArrayBuffer);
  }

  /** Buffers waiting on the shelf. */
  get count(): number {
    return this.kept.length + this.alignedFree.length;
  }
}

const WASM_PAGE = 64 * 1024;
/** The one piece of the WebAssembly API used here (Node's types leave the global out without the DOM lib). */
declare const WebAssembly: { Memory: new (d: { initial: number; maximum: number }) => { buffer: ArrayBuffer } };

/** A new WebAssembly memory of at least `size` bytes (it starts on a page), or null where none can be had. */
function alignedMemory(size: number): ArrayBuffer | null {
  const pages = Math.ceil(size / WASM_PAGE);
  try {
    return new WebAssembly.Memory({ initial: pages, maximum: pages }).buffer;
  } catch {
    return null;
  }
}
