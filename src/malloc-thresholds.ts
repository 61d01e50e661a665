/**
 * Keeps a server's freed heap memory for reuse instead of giving it back to the kernel, on glibc.
 *
 * A request body arrives as thousands of 64 KiB chunks that the garbage collector frees in
 * batches. With glibc's starting thresholds (blocks over 128 KiB get an mmap of their own, and
 * more than 128 KiB free at the top of the heap is trimmed off), each batch shrank the heap and
 * the next chunks grew it again: a 1 GiB upload took 14,000-89,000 page faults and up to twice the
 * CPU (docs/benchmarks.md, rounds 10 and 11).
 *
 * glibc raises both thresholds by itself the first time a block it had mmapped, up to 32 MiB, is
 * freed: blocks up to that size then come from the heap, and up to twice that is kept free at its
 * top. That is documented behaviour (mallopt(3), M_MMAP_THRESHOLD), and it is the only handle
 * JavaScript has on it: this allocates such a block and drops it, so the next collection frees it
 * (at start, before the first request, as starting allocates enough to run one). Elsewhere (musl,
 * macOS) it is an untouched allocation freed again. Settings in GLIBC_TUNABLES turn glibc's
 * adjustment off, and so this too; theirs apply instead.
 */
const BLOCK_BYTES = 32 * 1024 * 1024 - 64 * 1024; // under the 32 MiB cap, with room for glibc's header

let raised = false;

export function raiseMallocThresholds(): void {
  if (raised) return;
  raised = true;
  // Zero-filled, so calloc'd: mmap's pages are zero already, and none of them is touched.
  void new ArrayBuffer(BLOCK_BYTES);
}

/** Whether this process has raised them (for the bench's baselines, which must match Cairn's settings). */
export function mallocThresholdsRaised(): boolean {
  return raised;
}
