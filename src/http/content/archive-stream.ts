import { createRequire } from 'node:module';
import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createGzip } from 'node:zlib';
import type { ArchiveEntry, ArchivePlan } from '../../core/archives.js';
import { blobKey } from '../../core/context.js';
import type { BlobStore } from '../../ports/blob-store.js';
import { MANIFEST_NAME } from '../../shared/archive-names.js';

/**
 * The bytes of an archive, built while they are sent: each entry's blob is opened only when the
 * archiver reaches it and streamed through (fs or S3 alike), so memory stays flat whatever the
 * archive's size and nothing is written anywhere first.
 *
 * zip is written by yazl: a streaming writer with lazy entry streams, zip64 when an entry or the
 * whole passes 4 GiB, UTF-8 names, and Info-ZIP UTC timestamps beside the DOS ones. Entries are
 * stored, not deflated: artifacts are often compressed already (images, parquet, archives), the
 * CPU stays flat, and yazl can then tell the exact size before the first byte (`Content-Length`,
 * so clients show progress). tar.gz is tar-stream's pax/ustar writer (long and UTF-8 names as pax
 * headers) through zlib's gzip; its length is not known ahead.
 */
export interface ArchiveBody {
  stream: Readable;
  /** Known for zip, null for tar.gz. */
  length: number | null;
}

const ENTRY_MODE = 0o644;

/** An entry's bytes, opened when the archiver asks for them. */
function openEntry(blobs: BlobStore, entry: ArchiveEntry): Promise<Readable> {
  const a = entry.artifact;
  if (a.sizeBytes === 0) return Promise.resolve(Readable.from([]));
  return blobs.read(blobKey(a.tenantId, a.contentHash));
}

export async function archiveBody(blobs: BlobStore, plan: ArchivePlan): Promise<ArchiveBody> {
  return plan.format === 'zip' ? zipBody(blobs, plan) : tarGzBody(blobs, plan);
}

/**
 * yazl sums each entry's CRC-32 with buffer-crc32, a table loop in JavaScript: about 45 MB/s on
 * the bench's machine, which made a 1 GB archive take 30 s (fetching the same files one by one
 * took 14). Node's own zlib.crc32 (native, the same checksum) runs at 1.6 GB/s there; yazl calls
 * `unsigned(buffer, previous)` of the module it requires, so that one function is replaced, in
 * the module object yazl itself loads, before the first archive.
 */
let crcSwapped = false;
function useNativeCrc32(): void {
  if (crcSwapped) return;
  const requireFromYazl = createRequire(createRequire(import.meta.url).resolve('yazl'));
  const bufferCrc32 = requireFromYazl('buffer-crc32') as { unsigned: (buf: Buffer, previous?: number) => number };
  bufferCrc32.unsigned = (buf, previous) => crc32(buf, previous ?? 0);
  crcSwapped = true;
}

async function zipBody(blobs: BlobStore, plan: ArchivePlan): Promise<ArchiveBody> {
  useNativeCrc32();
  const { ZipFile } = await import('yazl');
  const zip = new ZipFile();
  zip.addBuffer(plan.manifest, MANIFEST_NAME, { mtime: new Date(plan.createdAt), mode: ENTRY_MODE, compress: false });
  for (const entry of plan.entries) {
    zip.addReadStreamLazy(
      entry.name,
      { mtime: new Date(entry.artifact.createdAt), mode: ENTRY_MODE, compress: false, size: entry.artifact.sizeBytes },
      (cb) => {
        openEntry(blobs, entry).then(
          (s) => cb(null, s),
          (err: Error) => cb(err, undefined as unknown as Readable),
        );
      },
    );
  }
  const out = new PassThrough();
  // A blob that cannot be read part-way ends the response with an error: the client sees a
  // broken download, never a complete-looking archive with a missing file.
  zip.on('error', (err: Error) => out.destroy(err));
  // @types/yazl leaves out the callback's argument: the total size, or -1 when it cannot be known.
  const end = zip.end.bind(zip) as (options: object, done: (size: number) => void) => void;
  // Always the zip64 end records (76 bytes more, read by every current unzip): yazl 3.3's size
  // calculation assumes them once the central directory passes 64 KiB (about 700 entries) while
  // its writer adds them only past 4 GiB, so without this the announced Content-Length would be
  // 76 bytes more than it sends. Forced, both count them.
  const length = await new Promise<number>((resolve) => end({ forceZip64Format: true }, resolve));
  zip.outputStream.on('error', (err: Error) => out.destroy(err)).pipe(out);
  return { stream: out, length: length >= 0 ? length : null };
}

async function tarGzBody(blobs: BlobStore, plan: ArchivePlan): Promise<ArchiveBody> {
  const { pack: tarPack } = await import('tar-stream');
  const pack = tarPack();
  // Level 1: the archive streams at the speed of the disk or bucket, not of the compressor
  // (level 6 is four times slower for a few percent on text; most artifacts barely compress).
  const gzip = createGzip({ level: 1 });
  const out = new PassThrough();
  pipeline(pack, gzip, out).catch((err: Error) => out.destroy(err));
  const header = (name: string, size: number, ms: number) => ({
    name,
    size,
    mtime: new Date(ms),
    mode: ENTRY_MODE,
    type: 'file' as const,
  });
  (async () => {
    await new Promise<void>((resolve, reject) =>
      pack.entry(header(MANIFEST_NAME, plan.manifest.length, plan.createdAt), plan.manifest, (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    for (const entry of plan.entries) {
      if (out.destroyed) return;
      const a = entry.artifact;
      const sink = pack.entry(header(entry.name, a.sizeBytes, a.createdAt));
      await pipeline(await openEntry(blobs, entry), sink);
    }
    pack.finalize();
  })().catch((err: Error) => {
    pack.destroy(err);
    out.destroy(err);
  });
  return { stream: out, length: null };
}
