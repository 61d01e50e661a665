import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as lists from '../../src/adapters/sql/list-queries.js';
import { SQLITE } from '../../src/adapters/sqlite/dialect.js';
import { SqliteMetadataStore } from '../../src/adapters/sqlite/index.js';
import type { ArtifactQuery } from '../../src/ports/metadata-store.js';
import { accountStoreContract } from '../contract/account-store.contract.js';
import { PIN_WRITER } from '../contract/metadata-fixture.js';
import { metadataStoreContracts } from '../contract/metadata-store.contracts.js';
import { resumableUploadStoreContract } from '../contract/resumable-upload-store.contract.js';

async function tempDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-sqlite-'));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

metadataStoreContracts('sqlite', async () => {
  const { dir, remove } = await tempDir();
  const store = new SqliteMetadataStore({ path: join(dir, 'cairn.db') });
  return {
    store,
    openPeer: () => new SqliteMetadataStore({ path: join(dir, 'cairn.db') }),
    cleanup: async () => {
      await store.close();
      await remove();
    },
  };
});

accountStoreContract('sqlite', async () => {
  const { dir, remove } = await tempDir();
  const store = new SqliteMetadataStore({ path: join(dir, 'cairn.db') });
  return {
    store,
    accounts: store.accounts,
    cleanup: async () => {
      await store.close();
      await remove();
    },
  };
});

resumableUploadStoreContract('sqlite', async () => {
  const { dir, remove } = await tempDir();
  const store = new SqliteMetadataStore({ path: join(dir, 'cairn.db') });
  return {
    store,
    resumables: store.resumables,
    openPeer: async () => {
      const peer = new SqliteMetadataStore({ path: join(dir, 'cairn.db') });
      return { resumables: peer.resumables, close: () => peer.close() };
    },
    cleanup: async () => {
      await store.close();
      await remove();
    },
  };
});

describe('SqliteMetadataStore specifics', () => {
  let dir: string;
  let remove: () => Promise<void>;
  let path: string;

  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
    path = join(dir, 'cairn.db');
  });
  afterEach(async () => {
    await remove();
  });

  it('migrates once: reopening keeps the schema version and the data', async () => {
    const first = new SqliteMetadataStore({ path });
    await first.migrate();
    await first.getOrSetSetting('secret', 'kept');
    await first.close();

    const raw = new Database(path);
    const version = raw.pragma('user_version', { simple: true });
    const tables = raw.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type IN ('table', 'index')").get();
    raw.close();
    expect(version).toBeGreaterThan(0);

    const second = new SqliteMetadataStore({ path });
    await second.migrate();
    await second.migrate();
    expect(await second.getOrSetSetting('secret', 'new')).toBe('kept');
    await second.close();

    const after = new Database(path);
    expect(after.pragma('user_version', { simple: true })).toBe(version);
    expect(after.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type IN ('table', 'index')").get()).toEqual(
      tables,
    );
    expect(after.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(after.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(after.pragma('foreign_key_check')).toEqual([]);
    after.close();
  });

  it('two connections on one file migrate and write without conflict', async () => {
    const a = new SqliteMetadataStore({ path });
    const b = new SqliteMetadataStore({ path });
    await Promise.all([a.migrate(), b.migrate()]);
    const tenant = { id: 't1', name: 'one', plan: 'free' as const, suspended: false, createdAt: 1, storageBytes: 0 };
    await a.createTenant(tenant);
    expect(await b.getTenant('t1')).toEqual(tenant);
    await expect(b.createTenant({ ...tenant, id: 't2' })).rejects.toMatchObject({ code: 'invalid_request' });
    await a.close();
    await b.close();
  });

  it('reads of one event-loop turn share a snapshot; its own writes and the next turn see everything', async () => {
    const a = new SqliteMetadataStore({ path });
    const b = new SqliteMetadataStore({ path });
    await a.migrate();
    const tenant = { id: 't1', name: 'one', plan: 'free' as const, suspended: false, createdAt: 1, storageBytes: 0 };
    await a.createTenant(tenant);
    const nextTurn = () => new Promise((r) => setImmediate(r));
    try {
      await nextTurn();
      expect(await b.getTenant('t1')).toMatchObject({ plan: 'free' });
      // Another connection commits within b's turn: b keeps its snapshot until the turn ends...
      await a.updateTenant('t1', { plan: 'pro' });
      expect(await b.getTenant('t1')).toMatchObject({ plan: 'free' });
      // ...but b's own write ends its snapshot first, and what it then reads includes both.
      await b.updateTenant('t1', { suspended: true });
      expect(await b.getTenant('t1')).toMatchObject({ plan: 'pro', suspended: true });
      await a.updateTenant('t1', { suspended: false });
      await nextTurn();
      expect(await b.getTenant('t1')).toMatchObject({ plan: 'pro', suspended: false });
      // A snapshot never holds the write lock: a writer elsewhere is not kept waiting by it.
      expect(await b.getTenant('t1')).toBeTruthy();
      await a.updateTenant('t1', { plan: 'free' });
      expect((await a.getTenant('t1'))?.plan).toBe('free');
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a GET whose row cannot be read fails alone, not the other tenants' GETs of its turn", async () => {
    const store = new SqliteMetadataStore({ path });
    await store.migrate();
    const art = (tenantId: string, id: string) => ({
      id,
      tenantId,
      filename: 'notes.txt',
      contentType: 'text/plain',
      sizeBytes: 10,
      contentHash: id.padEnd(64, '0').slice(0, 64),
      metadata: { k: 'v' },
      sessionId: null,
      agentId: null,
      createdAt: 1,
      expiresAt: null,
      deletedAt: null,
      status: 'active' as const,
    });
    try {
      for (const t of ['ta', 'tb']) {
        await store.createTenant({ id: t, name: t, plan: 'free', suspended: false, createdAt: 1, storageBytes: 0 });
      }
      const damaged = art('ta', 'art_aaaaaaaaaaaaaaaa');
      const sound = art('tb', 'art_bbbbbbbbbbbbbbbb');
      for (const a of [damaged, sound]) {
        expect(await store.pinBlob(a.tenantId, a.contentHash, a.sizeBytes, 1, PIN_WRITER)).toBe('write');
        expect((await store.insertArtifact({ artifact: a, storageLimitBytes: 1e9 })).kind).toBe('created');
      }
      // A's row damaged behind the store's back: its metadata is no longer JSON.
      const raw = new Database(path);
      raw.prepare('UPDATE artifacts SET metadata = ? WHERE id = ?').run('{not json', damaged.id);
      raw.close();
      await new Promise((r) => setImmediate(r));
      // Both GETs in one turn, so in one batch.
      const [a, b] = await Promise.allSettled([
        store.getArtifactWithPage('ta', damaged.id),
        store.getArtifactWithPage('tb', sound.id),
      ]);
      expect(a.status).toBe('rejected');
      expect(b).toEqual({ status: 'fulfilled', value: { artifact: sound, page: null } });
    } finally {
      await store.close();
    }
  });

  describe("a group commit's events", () => {
    const tenant = { id: 'tg', name: 'g', plan: 'free' as const, suspended: false, createdAt: 1, storageBytes: 0 };
    const art = (n: number) => ({
      id: `art_${String(n).padStart(16, '0')}`,
      tenantId: 'tg',
      filename: 'n.txt',
      contentType: 'text/plain',
      sizeBytes: 1,
      contentHash: String(n).padStart(64, 'a'),
      metadata: {},
      sessionId: 'run',
      agentId: null,
      createdAt: 1,
      expiresAt: null,
      deletedAt: null,
      status: 'active' as const,
    });
    const insertAll = async (store: SqliteMetadataStore, ns: number[]) => {
      for (const n of ns) await store.pinBlob('tg', art(n).contentHash, 1, 1, PIN_WRITER);
      // One turn: one group commit.
      return Promise.allSettled(ns.map((n) => store.insertArtifact({ artifact: art(n), storageLimitBytes: 1e9 })));
    };

    it('are written together at its end, in the order its writes ran, with one head bump', async () => {
      const store = new SqliteMetadataStore({ path });
      await store.migrate();
      await store.createTenant(tenant);
      // Every statement the connection runs, cached or not, goes through `prepared`.
      const statements: string[] = [];
      const c = (store as unknown as { c: { prepared(sql: string, raw?: boolean): unknown } }).c;
      const prepared = c.prepared.bind(c);
      c.prepared = (sql: string, raw?: boolean) => {
        statements.push(sql);
        return prepared(sql, raw);
      };
      try {
        const settled = await insertAll(store, [3, 1, 2]);
        expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
        const events = await store.listEvents('tg', { after: 0, limit: 10 });
        expect(events.map((e) => `${e.seq} ${e.subject.id}`)).toEqual([
          `1 ${art(3).id}`,
          `2 ${art(1).id}`,
          `3 ${art(2).id}`,
        ]);
        expect(statements.filter((s) => s.startsWith('INSERT INTO event_heads'))).toHaveLength(1);
      } finally {
        c.prepared = prepared;
        await store.close();
      }
    });

    it('that cannot be written roll the whole batch back, and every write of it rejects', async () => {
      const store = new SqliteMetadataStore({ path });
      await store.migrate();
      await store.createTenant(tenant);
      try {
        // The feed's table gone behind the store's back: writing the batch's events fails.
        (store as unknown as { c: { db: Database.Database } }).c.db.exec('DROP TABLE events');
        const settled = await insertAll(store, [1, 2]);
        expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
        expect(await store.getArtifact('tg', art(1).id)).toBeNull();
        expect(await store.getArtifact('tg', art(2).id)).toBeNull();
        expect((await store.latestSeqs(['tg'])).get('tg')).toBe(0);
      } finally {
        await store.close();
      }
    });
  });

  describe('query plans', () => {
    let db: Database.Database;
    beforeEach(async () => {
      const store = new SqliteMetadataStore({ path });
      await store.migrate();
      await store.close();
      db = new Database(path, { readonly: true });
    });
    afterEach(() => db.close());

    const plan = (sql: string, params: unknown[]) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join(' | ');
    const base: ArtifactQuery = { now: 1, limit: 51 };
    const cursor = { createdAt: 5, id: 'art_x' };

    const cases: [string, ArtifactQuery, RegExp][] = [
      ['first page', base, /USING INDEX artifacts_list \(tenant_id=\?\)/],
      [
        'deep cursor page',
        { ...base, after: cursor },
        /USING INDEX artifacts_list \(tenant_id=\? AND \(created_at,id\)<\(\?,\?\)\)/,
      ],
      [
        'time window',
        { ...base, createdAfter: 1, createdBefore: 9 },
        /USING INDEX artifacts_list \(tenant_id=\? AND created_at>\? AND created_at<\?\)/,
      ],
      [
        'session',
        { ...base, sessionId: 's', after: cursor, createdAfter: 1 },
        /USING INDEX artifacts_by_session \(tenant_id=\? AND session_id=\?/,
      ],
      [
        'agent',
        { ...base, agentId: 'a', after: cursor },
        /USING INDEX artifacts_by_agent \(tenant_id=\? AND agent_id=\? AND \(created_at,id\)/,
      ],
      ['filename', { ...base, filename: 'f' }, /USING INDEX artifacts_by_filename \(tenant_id=\? AND filename=\?\)/],
      [
        'content type',
        { ...base, contentType: 'c' },
        /USING INDEX artifacts_by_type \(tenant_id=\? AND content_type=\?\)/,
      ],
      [
        'metadata',
        { ...base, after: cursor, sessionId: 's', metadata: [{ key: 'k', value: 'v' }] },
        /^SEARCH m USING COVERING INDEX artifact_meta_lookup \(tenant_id=\? AND key=\? AND value=\? AND \(created_at,artifact_id\)<\(\?,\?\)\)/,
      ],
      [
        'two metadata filters',
        {
          ...base,
          metadata: [
            { key: 'k', value: 'v' },
            { key: 'type', value: 'transcript' },
          ],
        },
        /^SEARCH m USING COVERING INDEX artifact_meta_lookup .*SEARCH m2 .*USING PRIMARY KEY \(artifact_id=\? AND key=\?\)/,
      ],
    ];

    for (const [label, query, expected] of cases) {
      it(`lists by index with no sort: ${label}`, () => {
        const { sql, params } = lists.buildArtifactListQuery(SQLITE, 't', query);
        const detail = plan(sql, params);
        expect(detail).toMatch(expected);
        expect(detail).not.toMatch(/SCAN|TEMP B-TREE/);
      });
    }

    it('lists sessions by index with no sort', () => {
      const { sql, params } = lists.buildSessionListQuery(SQLITE, 't', {
        limit: 51,
        after: { lastArtifactAt: 5, sessionId: 's' },
      });
      const detail = plan(sql, params);
      expect(detail).toMatch(
        /USING INDEX sessions_list \(tenant_id=\? AND \(last_artifact_at,session_id\)<\(\?,\?\)\)/,
      );
      expect(detail).not.toMatch(/SCAN|TEMP B-TREE/);
    });

    it('lists sessions created after a time by walking the index only down to that time', () => {
      const { sql, params } = lists.buildSessionListQuery(SQLITE, 't', { limit: 51, createdAfter: 5 });
      const detail = plan(sql, params);
      expect(detail).toMatch(/USING INDEX sessions_list \(tenant_id=\? AND last_artifact_at>\?\)/);
      expect(detail).not.toMatch(/SCAN|TEMP B-TREE/);
    });
  });
});
