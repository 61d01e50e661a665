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
 * uploads instead of 3 to 5. Buffers taken from a shelf are
 * allocated once per process.
 *
 * A buffer given back must be one nothing will read or write any more; its old bytes stay in it,
 * so a taker must only ever use the bytes it wrote itself.
 */
export class BufferShelf {
  private readonly kept: Buffer[] = [];

  constructor(
    readonly size: number,
    private readonly max: number,
  ) {}

  take(): Buffer {
    return this.kept.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  give(buffer: Buffer): void {
    if (buffer.length === this.size && this.kept.length < this.max && !this.kept.includes(buffer)) {
      this.kept.push(buffer);
    }
  }

  /** Buffers waiting on the shelf. */
  get count(): number {
    return this.kept.length;
  }
}
