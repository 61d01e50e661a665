import type { Readable } from 'node:stream';

/** Bytes that have been streamed to temporary storage, hashed and counted, but are not visible yet. */
export interface StagedBlob {
  readonly stagingId: string;
  readonly sizeBytes: number;
  /** Lowercase hex SHA-256 of the bytes. */
  readonly sha256: string;
}

/** What `land` kept: its size and hash, and whether the source delivered everything. */
export interface LandResult {
  sizeBytes: number;
  /** False when the source failed part-way (what arrived is kept). */
  complete: boolean;
  /** Lowercase hex SHA-256 of the bytes kept. */
  sha256: string;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

/**
 * Content-addressed byte storage. Keys are chosen by the core (`<tenantId>/<sha256>`), so two
 * uploads of the same bytes by one tenant share one stored object.
 */
export interface BlobStore {
  /**
   * Creates what the store needs and removes staging leftovers of stopped processes (a crash),
   * never what another running process (a server, an admin command) is staging.
   */
  init(): Promise<void>;
  /**
   * Streams `source` to staging while hashing and counting. Rejects with
   * `CairnError('file_too_large')` as soon as more than `maxBytes` have arrived, and with the
   * source's error if it fails (for example a client that disconnects). On any rejection
   * nothing is left behind. Memory use does not grow with the size of the stream.
   */
  stage(source: Readable, maxBytes: number): Promise<StagedBlob>;
  /**
   * Makes staged bytes durable under `key` in one step that either fully happens or not at all.
   * If `key` already holds bytes (same content address, so the same bytes) they stay as they
   * are and the staged copy is dropped: stored bytes are never written again (on object storage
   * an overwrite is not atomic everywhere, and readers of the stored object would see it
   * vanish). The core commits a key only as its one writer (ArtifactStore.pinBlob), so that
   * look-then-write is never raced by another commit of the same key. The staged blob is
   * consumed either way.
   */
  commit(staged: StagedBlob, key: string): Promise<void>;
  /** Drops staged bytes; safe to call twice or after commit. */
  discard(staged: StagedBlob): Promise<void>;
  /** Size of the stored object, or null when there is none. */
  stat(key: string): Promise<{ sizeBytes: number } | null>;
  /** Streams the stored bytes, or one inclusive range of them. Rejects if the key is missing. */
  read(key: string, range?: ByteRange): Promise<Readable>;
  /** Removes the object; no error when it is already gone. */
  delete(key: string): Promise<void>;
  /** Resolves when the store can be used (readiness): the folder is writable, the bucket answers. */
  ping?(): Promise<void>;
  close(): Promise<void>;
  /**
   * For presigned uploads on object storage: a URL (and headers) the client PUTs exactly
   * `sizeBytes` to, landing at `landingKey`. Stores that cannot sign such a URL leave this out and
   * Cairn receives the bytes itself through a signed URL of its own.
   */
  presignUpload?(
    landingKey: string,
    sizeBytes: number,
    expiresInSeconds: number,
  ): Promise<{ url: string; headers: Record<string, string> }>;
  /**
   * Landing objects (`uploads/<tenant>/<name>`, named by the core) hold bytes that arrived before
   * they become an artifact: a presigned PUT straight to object storage, or one piece of a
   * resumable upload. They stay until the core drops them or the sweeper finds them abandoned.
   *
   * `land` writes what `source` delivers to the new landing object `landingKey` (the core never
   * reuses a key). When the source fails part-way (a dropped connection), what arrived is kept,
   * not discarded, and the result says `complete: false`: a resumable upload continues from it.
   * Rejects with `CairnError('file_too_large')` past `maxBytes`, and on a storage failure,
   * keeping nothing. Memory use does not grow with the size of the stream.
   */
  land(landingKey: string, source: Readable, maxBytes: number): Promise<LandResult>;
  /** Streams a landing object; rejects if there is none. */
  readLanded(landingKey: string): Promise<Readable>;
  /**
   * Hashes and counts a landing object (rejecting with `file_too_large` past `maxBytes`, as
   * `stage` does) and returns it as staged bytes for `commit`; null when there is no such object.
   * `landed` is what this process's own `land` of that object returned: its size and hash are then
   * taken as they are, without reading the object again. The landing object is NOT removed: a
   * completion that fails after this must be able to run again. `discard` of the result never
   * touches the landing object.
   */
  stageLanded(landingKey: string, maxBytes: number, landed?: LandResult): Promise<StagedBlob | null>;
  /** Removes a landing object; no error when it is already gone. */
  dropLanded(landingKey: string): Promise<void>;
  /** Removes landing objects last written before `landedBefore` (ms): what abandoned uploads left. Returns how many. */
  sweepLandings(landedBefore: number): Promise<number>;
  /**
   * For stores that stage on a disk of their own: removes what uploads of processes that have
   * stopped left in staging, as `init` does, for a process that crashed after this one started.
   * Returns how many leftovers (one per stopped process) were removed.
   */
  sweepStaging?(): Promise<number>;
  /** A presigned GET of the object with download headers, for stores that can sign one (S3). */
  presignGet?(key: string, filename: string, contentType: string, expiresInSeconds: number): Promise<string>;
}
