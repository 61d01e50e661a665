import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteMetadataStore } from '../../src/adapters/sqlite/index.js';
import { RequestCounter } from '../../src/core/request-counter.js';
import type { MetadataStore, RequestDelta } from '../../src/ports/metadata-store.js';

/** The in-memory monthly counter over a real SQLite store (two counters = two instances). */
let dir: string;
let store: SqliteMetadataStore;
const T = 'ten_counter';
const M = '2026-11';

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'cairn-counter-'));
  store = new SqliteMetadataStore({ path: path.join(dir, 'c.sqlite') });
  await store.migrate();
  await store.createTenant({ id: T, name: 'counter', plan: 'free', suspended: false, createdAt: 0, storageBytes: 0 });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** What admission does on its asynchronous path: load the counter, then count synchronously. */
async function tryCount(counter: RequestCounter, limit: number): Promise<boolean> {
  await counter.load(T, M);
  return counter.tryCountNow(T, M, limit);
}

describe('RequestCounter', () => {
  it('a flush asked for while one runs writes and reads what came after that one started', async () => {
    const counter = new RequestCounter(store);
    expect(await tryCount(counter, 100)).toBe(true);
    const running = counter.flush();
    // Counted here and written by another instance after the running flush took its snapshot.
    expect(counter.tryCountNow(T, M, 100)).toBe(true);
    await store.addRequests([{ tenantId: T, month: M, n: 5 }]);
    await counter.flush();
    await running;
    expect(await store.getRequestCount(T, M)).toBe(7);
    expect(counter.countNow(T, M)).toBe(7);
  });

  it('answers synchronously only once loaded', async () => {
    const counter = new RequestCounter(store);
    expect(counter.isLoaded(T, M)).toBe(false);
    expect(() => counter.tryCountNow(T, M, 10)).toThrow('not loaded');
    await counter.load(T, M);
    expect(counter.isLoaded(T, M)).toBe(true);
    expect(counter.tryCountNow(T, M, 1)).toBe(true);
    expect(counter.tryCountNow(T, M, 1)).toBe(false);
    expect(counter.countNow(T, M)).toBe(1);
  });

  it('is exact on one instance: concurrent callers never pass the limit, and flushes write every count', async () => {
    const counter = new RequestCounter(store);
    const results = await Promise.all(Array.from({ length: 50 }, () => tryCount(counter, 30)));
    expect(results.filter(Boolean)).toHaveLength(30);
    expect(await counter.count(T, M)).toBe(30);
    expect(await store.getRequestCount(T, M)).toBe(0);
    await counter.flush();
    expect(await store.getRequestCount(T, M)).toBe(30);
    expect(await counter.count(T, M)).toBe(30);
    expect(await tryCount(counter, 30)).toBe(false);
  });

  it('starts from the stored total and sees other writers after a flush', async () => {
    await store.addRequests([{ tenantId: T, month: M, n: 7 }]);
    const a = new RequestCounter(store);
    const b = new RequestCounter(store);
    expect(await tryCount(a, 100)).toBe(true);
    expect(await tryCount(b, 100)).toBe(true);
    expect(await a.count(T, M)).toBe(8);
    await a.flush();
    await b.flush();
    await a.flush();
    expect(await a.count(T, M)).toBe(9);
    expect(await b.count(T, M)).toBe(9);
    expect(await store.getRequestCount(T, M)).toBe(9);
  });

  it('keeps the counts of a failed flush and writes them with the next one', async () => {
    let fail = true;
    const flaky: MetadataStore = Object.create(store, {
      addRequests: {
        value: (deltas: readonly RequestDelta[]) =>
          fail ? Promise.reject(new Error('store down')) : store.addRequests(deltas),
      },
    });
    const counter = new RequestCounter(flaky);
    for (let i = 0; i < 3; i++) await tryCount(counter, 100);
    await expect(counter.flush()).rejects.toThrow('store down');
    expect(await counter.count(T, M)).toBe(3);
    await tryCount(counter, 100);
    fail = false;
    await counter.flush();
    expect(await store.getRequestCount(T, M)).toBe(4);
    expect(await counter.count(T, M)).toBe(4);
  });

  it('counts taken while a flush is in flight are neither lost nor counted twice', async () => {
    const counter = new RequestCounter(store);
    await tryCount(counter, 100);
    const flushing = counter.flush();
    await tryCount(counter, 100);
    expect(await counter.count(T, M)).toBe(2);
    await flushing;
    expect(await counter.count(T, M)).toBe(2);
    await counter.stop();
    expect(await store.getRequestCount(T, M)).toBe(2);
  });
});
