import { describe, expect, it } from 'vitest';
import { KeyFailure, TurnBatch } from '../../src/adapters/sql/turn-batch.js';

/** A loader that records each batch it was given and doubles every key. */
function doubling(maxKeys?: number) {
  const batches: number[][] = [];
  const batch = new TurnBatch<number, number>(async (keys) => {
    batches.push(keys);
    return keys.map((k) => k * 2);
  }, maxKeys);
  return { batch, batches };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnBatch', () => {
  it('answers the reads of one turn with one load, each its own value, in call order', async () => {
    const { batch, batches } = doubling();
    const answers = await Promise.all([batch.get(3), batch.get(1), batch.get(3), batch.get(7)]);
    expect(answers).toEqual([6, 2, 6, 14]);
    expect(batches).toEqual([[3, 1, 3, 7]]);
  });

  it('starts a new batch in the next turn', async () => {
    const { batch, batches } = doubling();
    const first = batch.get(1);
    await nextTurn();
    const second = batch.get(2);
    expect(await Promise.all([first, second])).toEqual([2, 4]);
    expect(batches).toEqual([[1], [2]]);
  });

  it('splits a turn with more keys than maxKeys into several loads', async () => {
    const { batch, batches } = doubling(2);
    const answers = await Promise.all([1, 2, 3, 4, 5].map((k) => batch.get(k)));
    expect(answers).toEqual([2, 4, 6, 8, 10]);
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('rejects every read of a failed load, and only those', async () => {
    let calls = 0;
    const batch = new TurnBatch<string, string>(async (keys) => {
      calls++;
      if (keys.includes('bad')) throw new Error('connection lost');
      return keys;
    }, 2);
    const results = await Promise.allSettled(['ok', 'bad', 'fine'].map((k) => batch.get(k)));
    expect(calls).toBe(2);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      'connection lost',
      'connection lost',
      'fine',
    ]);
    // The batcher is still usable afterwards.
    expect(await batch.get('again')).toBe('again');
  });

  it('takes a synchronous loader (SQLite): one call per turn, answers in call order', async () => {
    const batches: string[][] = [];
    const batch = new TurnBatch<string, string>((keys) => {
      batches.push(keys);
      return keys.map((k) => k.toUpperCase());
    });
    expect(await Promise.all([batch.get('a'), batch.get('b'), batch.get('a')])).toEqual(['A', 'B', 'A']);
    expect(batches).toEqual([['a', 'b', 'a']]);
  });

  it("does not answer before the turn ends, so the turn's other reads join the batch", async () => {
    const batches: number[][] = [];
    const batch = new TurnBatch<number, number>((keys) => {
      batches.push(keys);
      return keys;
    });
    const first = batch.get(1);
    let answered = false;
    void first.then(() => {
      answered = true;
    });
    // Microtasks of this turn (an awaiting handler's continuation) run, and still no answer.
    await Promise.resolve();
    await Promise.resolve();
    expect(answered).toBe(false);
    const second = batch.get(2);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(batches).toEqual([[1, 2]]);
  });

  it("rejects every read of a synchronous loader's throw instead of throwing it into the event loop", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const batch = new TurnBatch<string, string>((keys) => {
        if (keys.includes('bad')) throw new Error('database is closed');
        return keys;
      });
      const results = await Promise.allSettled([batch.get('ok'), batch.get('bad')]);
      expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : r.value))).toEqual([
        'database is closed',
        'database is closed',
      ]);
      await nextTurn();
      expect(uncaught).toEqual([]);
      expect(await batch.get('again')).toBe('again');
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it("rejects only the read whose key failed, answering the batch's others", async () => {
    const batches: string[][] = [];
    const batch = new TurnBatch<string, string>((keys) => {
      batches.push(keys);
      return keys.map((k) => (k === 'damaged' ? new KeyFailure(new Error('database disk image is malformed')) : k));
    });
    const results = await Promise.allSettled([batch.get('a'), batch.get('damaged'), batch.get('b')]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : r.value))).toEqual([
      'a',
      'database disk image is malformed',
      'b',
    ]);
    expect(batches).toEqual([['a', 'damaged', 'b']]);
  });
});
