import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AbRow } from './ab-engines.js';

/**
 * The metadata half of the upload and delete paths, A against B in one process: each side's
 * built SQLite store (`<build>/dist/adapters/sqlite/index.js`) on a file of its own, the same
 * calls (an upload's pin and insert; a soft delete), rounds alternating A then B then B then A.
 * Without HTTP, multipart parsing and hashing around them, what a change costs the store's
 * transactions shows (the change feed's event writes, issue 55); the HTTP figures (`small`,
 * `delete`) carry that cost diluted in everything else a request does.
 */

export const AB_STORE_FIGURES = ['store-upload', 'store-delete'] as const;
export type AbStoreFigure = (typeof AB_STORE_FIGURES)[number];

interface Store {
  migrate(): Promise<unknown>;
  createTenant(t: unknown): Promise<unknown>;
  pinBlob(tenant: string, hash: string, size: number, now: number, writer: unknown): Promise<string>;
  insertArtifact(input: unknown): Promise<unknown>;
  softDeleteArtifact(tenant: string, id: string, now: number): Promise<unknown>;
  close(): Promise<void>;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

async function openStore(build: string, file: string): Promise<Store> {
  const mod = (await import(pathToFileURL(path.join(build, 'dist/adapters/sqlite/index.js')).href)) as {
    SqliteMetadataStore: new (o: { path: string }) => Store;
  };
  const store = new mod.SqliteMetadataStore({ path: file });
  await store.migrate();
  await store.createTenant({
    id: 'ten_bench',
    name: 'bench',
    plan: 'pro',
    suspended: false,
    createdAt: 0,
    storageBytes: 0,
  });
  return store;
}

/** `n` uploads' metadata (pin, then insert with a session and its idempotency record), 16 at a time. */
async function uploads(
  store: Store,
  side: string,
  round: number,
  n: number,
): Promise<{ perSec: number; ids: string[] }> {
  const ids: string[] = [];
  const started = performance.now();
  for (let i = 0; i < n; i += 16) {
    await Promise.all(
      Array.from({ length: Math.min(16, n - i) }, async (_, j) => {
        const k = `${side}-${round}-${i + j}`;
        const id = `art_${sha(k).slice(0, 16)}`;
        const hash = sha(`bytes ${k}`);
        const now = Date.now();
        await store.pinBlob('ten_bench', hash, 4096, now, { owner: k, until: now + 60_000 });
        await store.insertArtifact({
          artifact: {
            id,
            tenantId: 'ten_bench',
            filename: 'small.bin',
            contentType: 'application/octet-stream',
            sizeBytes: 4096,
            contentHash: hash,
            metadata: { step: i + j },
            sessionId: `run-${round}`,
            agentId: null,
            createdAt: now,
            expiresAt: now + 86_400_000,
            deletedAt: null,
            status: 'active',
          },
          storageLimitBytes: Number.MAX_SAFE_INTEGER,
          idempotency: { key: k, notBefore: now - 86_400_000, response: { status: 201, body: '{}' } },
        });
        ids.push(id);
      }),
    );
  }
  return { perSec: n / ((performance.now() - started) / 1000), ids };
}

async function deletes(store: Store, ids: string[]): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < ids.length; i += 16) {
    await Promise.all(ids.slice(i, i + 16).map((id) => store.softDeleteArtifact('ten_bench', id, Date.now())));
  }
  return ids.length / ((performance.now() - started) / 1000);
}

export async function abStoreRows(
  builds: { A?: string; B: string },
  figures: readonly AbStoreFigure[],
  pairs: number,
  n: number,
  log: (line: string) => void,
): Promise<AbRow[]> {
  const here = path.resolve(import.meta.dirname, '../../..');
  const root = await mkdtemp(path.join(tmpdir(), 'cairn-ab-store-'));
  const fmt = (x: number) => x.toFixed(0);
  const up: AbRow = { label: 'store upload metadata, SQLite (uploads/s)', format: fmt, A: [], B: [] };
  const del: AbRow = { label: 'store soft delete, SQLite (deletes/s)', format: fmt, A: [], B: [] };
  const stores: Record<'A' | 'B', Store> = {
    A: await openStore(builds.A ?? here, path.join(root, 'a.sqlite')),
    B: await openStore(builds.B, path.join(root, 'b.sqlite')),
  };
  try {
    for (let round = 0; round <= pairs; round++) {
      const order: ('A' | 'B')[] = round % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
      for (const side of order) {
        const u = await uploads(stores[side], side, round, n);
        const d = await deletes(stores[side], u.ids);
        log(
          `store ${round === 0 ? 'warm-up' : `pair ${round}`}: ${side} ${fmt(u.perSec)} uploads/s, ${fmt(d)} deletes/s`,
        );
        if (round > 0) {
          up[side].push(u.perSec);
          del[side].push(d);
        }
      }
    }
  } finally {
    await stores.A.close();
    await stores.B.close();
    await rm(root, { recursive: true, force: true });
  }
  return [...(figures.includes('store-upload') ? [up] : []), ...(figures.includes('store-delete') ? [del] : [])];
}
