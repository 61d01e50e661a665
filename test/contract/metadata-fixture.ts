import { createHash } from 'node:crypto';
import { afterEach, beforeEach, expect } from 'vitest';
import type { ArtifactRow, LinkRow, MetadataStore, PageInput, TenantRow } from '../../src/ports/metadata-store.js';

/**
 * Opens a store on an empty database; the fixture calls `migrate()` itself (twice, as every start
 * does). Each metadata port's contract is run with one of these per adapter (SQLite, PostgreSQL).
 */
export type MakeMetadataStore = () => Promise<{
  store: MetadataStore;
  /** Another store on the same database, as another process or instance would open it. */
  openPeer: () => MetadataStore;
  cleanup: () => Promise<void>;
}>;

export const T0 = 1_800_000_000_000;
export const MIN = 60_000;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
export const UNLIMITED = Number.MAX_SAFE_INTEGER;
/** The writer the suites pin as (its write never lapses): bytes not referenced yet are its to write. */
export const PIN_WRITER = { owner: 'contract-writer', until: UNLIMITED };

/**
 * What every metadata port's contract starts from, registered in the calling `describe`: before
 * each test a store on an empty, migrated database with tenants A (alpha) and B (beta), in `state`
 * (read it in a `beforeEach`: it is replaced for every test); and the builders of rows the suites
 * share. The ports are one adapter object, so a suite sets up through any port and asserts the
 * rules of its own.
 */
export function metadataFixture(makeStore: MakeMetadataStore) {
  const state = {
    store: undefined as unknown as MetadataStore,
    openPeer: undefined as unknown as () => MetadataStore,
    A: undefined as unknown as TenantRow,
    B: undefined as unknown as TenantRow,
    /** The schema version a fresh database reaches, as the first migrate() reported it. */
    schemaVersion: 0,
  };
  let cleanup: () => Promise<void>;
  let seq = 0;

  const sha = (s: string) => createHash('sha256').update(s).digest('hex');
  const nextId = (prefix: string, len: number) => `${prefix}${String(++seq).padStart(len, '0')}`;

  async function tenant(tenantName: string): Promise<TenantRow> {
    return state.store.createTenant({
      id: `ten_${tenantName}`,
      name: tenantName,
      plan: 'free',
      suspended: false,
      createdAt: T0,
      storageBytes: 0,
    });
  }

  function row(tenantId: string, over: Partial<ArtifactRow> = {}): ArtifactRow {
    const id = over.id ?? nextId('art_', 16);
    return {
      id,
      tenantId,
      filename: 'notes.txt',
      contentType: 'text/plain',
      sizeBytes: 100,
      contentHash: sha(id),
      metadata: {},
      sessionId: null,
      agentId: null,
      createdAt: T0,
      expiresAt: null,
      deletedAt: null,
      status: 'active',
      ...over,
    };
  }

  /** Pins then inserts, as the core does. */
  async function put(a: ArtifactRow, limit = UNLIMITED): Promise<ArtifactRow> {
    expect(['write', 'stored']).toContain(
      await state.store.pinBlob(a.tenantId, a.contentHash, a.sizeBytes, a.createdAt, PIN_WRITER),
    );
    const result = await state.store.insertArtifact({ artifact: a, storageLimitBytes: limit });
    expect(result.kind).toBe('created');
    return a;
  }

  const list = (tenantId: string, q: Partial<Parameters<MetadataStore['listArtifacts']>[1]> = {}) =>
    state.store.listArtifacts(tenantId, { now: T0, limit: 100, ...q });
  const ids = (rows: { id: string }[]) => rows.map((r) => r.id);
  const storage = async (t: TenantRow) => (await state.store.getTenant(t.id))!.storageBytes;

  function link(artifact: ArtifactRow, over: Partial<LinkRow> = {}): LinkRow {
    return {
      id: nextId('lnk_', 20),
      tenantId: artifact.tenantId,
      artifactId: artifact.id,
      createdAt: T0,
      expiresAt: T0 + DAY,
      revokedAt: null,
      ...over,
    };
  }

  function page(artifact: ArtifactRow, over: Partial<PageInput> = {}): PageInput {
    return {
      slug: nextId('pg_', 16),
      tenantId: artifact.tenantId,
      artifactId: artifact.id,
      visibility: 'unlisted',
      access: 'none',
      title: null,
      passwordHash: null,
      ...over,
    };
  }

  beforeEach(async () => {
    let store: MetadataStore;
    ({ store, openPeer: state.openPeer, cleanup } = await makeStore());
    state.store = store;
    const first = await store.migrate();
    expect(first.from).toBe(0);
    expect(first.to).toBeGreaterThan(0);
    state.schemaVersion = first.to;
    expect(await store.migrate()).toEqual({ from: state.schemaVersion, to: state.schemaVersion });
    seq = 0;
    state.A = await tenant('alpha');
    state.B = await tenant('beta');
  });

  afterEach(async () => {
    await cleanup();
  });

  return { state, sha, row, put, list, ids, storage, link, page };
}
