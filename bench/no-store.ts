import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HashCounter } from '../src/adapters/blob-common/hash-counter.js';
import type { BlobStore, StagedBlob } from '../src/ports/blob-store.js';
import type { MetadataStore } from '../src/ports/metadata-store.js';
import type { Adapters } from '../src/runtime.js';

/**
 * The small-upload baseline: Cairn's own upload route returning 201 without storing. Everything
 * the route does before and around storage still runs (authentication, rate limit, request
 * counter, multipart parsing, field checks, the quota and session reads, hashing for the record,
 * the response), but the bytes are dropped as they arrive and neither the blob pin nor the
 * artifact row is written. Bench only: this never backs a real server.
 */
export function withoutStoring(adapters: Adapters): Adapters {
  return { ...adapters, blobs: droppingBlobs(adapters.blobs), store: withoutArtifactWrites(adapters.store) };
}

function droppingBlobs(real: BlobStore): BlobStore {
  return {
    init: () => real.init(),
    close: () => real.close(),
    async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
      const counter = new HashCounter(maxBytes);
      await pipeline(source, counter, async (chunks: AsyncIterable<Buffer>) => {
        for await (const _chunk of chunks);
      });
      return { stagingId: 'dropped', sizeBytes: counter.bytes, sha256: await counter.digest() };
    },
    commit: async () => {},
    discard: async () => {},
    stat: (key) => real.stat(key),
    read: (key, range) => real.read(key, range),
    delete: (key) => real.delete(key),
    land: (key, source, maxBytes) => real.land(key, source, maxBytes),
    readLanded: (key) => real.readLanded(key),
    stageLanded: (key, maxBytes, landed) => real.stageLanded(key, maxBytes, landed),
    dropLanded: (key) => real.dropLanded(key),
    sweepLandings: (before) => real.sweepLandings(before),
  };
}

function withoutArtifactWrites(real: MetadataStore): MetadataStore {
  const skipped: Partial<MetadataStore> = {
    pinBlob: async () => 'stored',
    insertArtifact: async (input) => ({ kind: 'created', artifact: input.artifact }),
  };
  return new Proxy(real, {
    get(target, prop, receiver) {
      if (prop in skipped) return skipped[prop as keyof MetadataStore];
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
