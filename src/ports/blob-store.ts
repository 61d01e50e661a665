import type { Readable } from 'node:stream';

/** Bytes that have been streamed to temporary storage, hashed and counted, but are not visible yet. */
export interface StagedBlob {
  readonly stagingId: string;
  readonly sizeBytes: number;
  /** Lowercase hex SHA-256 of the bytes. */
  readonly sha256: string;
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
   * If `key` already holds bytes (same content address, so the same bytes) the key keeps
   * holding them: a store may drop the staged copy or put it in their place. The staged blob is
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
   * Hashes and counts the bytes a client PUT directly to `landingKey` (rejecting with
   * `file_too_large` past `maxBytes`, as `stage` does) and returns them as staged bytes for
   * `commit`; null when nothing has arrived there yet. The landing object is NOT removed: a
   * `complete` that fails after this must be able to run again. `discard` of the result never
   * touches the landing object.
   */
  stageLanded?(landingKey: string, maxBytes: number): Promise<StagedBlob | null>;
  /** Removes the landing object once its artifact is active; no error when it is already gone. */
  dropLanded?(landingKey: string): Promise<void>;
  /**
   * Removes landing objects last written before `landedBefore` (ms): what abandoned presigned
   * uploads left. Returns how many were removed.
   */
  sweepLandings?(landedBefore: number): Promise<number>;
  /**
   * For stores that stage on a disk of their own: removes what uploads of processes that have
   * stopped left in staging, as `init` does, for a process that crashed after this one started.
   * Returns how many leftovers (one per stopped process) were removed.
   */
  sweepStaging?(): Promise<number>;
  /** A presigned GET of the object with download headers, for stores that can sign one (S3). */
  presignGet?(key: string, filename: string, contentType: string, expiresInSeconds: number): Promise<string>;
}
