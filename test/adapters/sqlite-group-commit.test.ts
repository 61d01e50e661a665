import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Connection } from '../../src/adapters/sqlite/database.js';

/** `Connection.writeTogether`: the writes of one event-loop turn share one transaction. */
describe('SQLite group commit', () => {
  let dir: string;
  let path: string;
  let c: Connection;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-group-commit-'));
    path = join(dir, 'g.db');
    c = new Connection(path);
    c.db.exec('CREATE TABLE t (n INTEGER PRIMARY KEY)');
  });
  afterEach(async () => {
    c.close();
    await rm(dir, { recursive: true, force: true });
  });

  const rows = () => (c.db.prepare('SELECT n FROM t ORDER BY n').all() as { n: number }[]).map((r) => r.n);
  const insert = (n: number) => () => c.run('INSERT INTO t (n) VALUES (?)', n);

  it('commits the writes of one turn in one transaction, after all of them ran', async () => {
    let seenByPeer: number[] | undefined;
    const results = Promise.all([
      c.writeTogether(insert(1)),
      c.writeTogether(insert(2)),
      c.writeTogether(() => {
        // The earlier writes of the batch have run, but nobody else sees them before the commit.
        const peer = new Database(path, { readonly: true });
        seenByPeer = (peer.prepare('SELECT n FROM t').all() as { n: number }[]).map((r) => r.n);
        peer.close();
        return c.get<{ k: number }>('SELECT count(*) AS k FROM t')!.k;
      }),
    ]);
    expect(rows()).toEqual([]);
    expect(await results).toEqual([1, 1, 2]);
    expect(seenByPeer).toEqual([]);
    expect(rows()).toEqual([1, 2]);
  });

  it('rolls back and rejects only the write that throws; the others commit', async () => {
    const settled = await Promise.allSettled([
      c.writeTogether(insert(1)),
      c.writeTogether(() => {
        insert(2)();
        throw new Error('refused');
      }),
      c.writeTogether(insert(3)),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ message: 'refused' });
    expect(rows()).toEqual([1, 3]);
  });

  it('tells each kept write, before the commit, and not the one rolled back', async () => {
    const kept: string[] = [];
    const keep = (name: string) => () => kept.push(`${name} ${rows().length}`);
    const settled = await Promise.allSettled([
      c.writeTogether(insert(1), keep('first')),
      c.writeTogether(() => {
        insert(2)();
        throw new Error('refused');
      }, keep('refused')),
      c.writeTogether(insert(3), keep('third')),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    // Each told in turn, inside the transaction: the refused write rolled back to its savepoint.
    expect(kept).toEqual(['first 1', 'third 2']);
    expect(rows()).toEqual([1, 3]);
  });

  it('a lone write that throws leaves nothing behind', async () => {
    await expect(
      c.writeTogether(() => {
        insert(1)();
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(rows()).toEqual([]);
    expect(c.db.inTransaction).toBe(false);
  });

  it('rejects every write of the batch, and writes none, when the transaction cannot start', async () => {
    c.db.pragma('busy_timeout = 20');
    const holder = new Database(path);
    holder.prepare('BEGIN IMMEDIATE').run();
    try {
      const settled = await Promise.allSettled([c.writeTogether(insert(1)), c.writeTogether(insert(2))]);
      expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
      expect((settled[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_BUSY' });
    } finally {
      holder.prepare('ROLLBACK').run();
      holder.close();
    }
    expect(rows()).toEqual([]);
    // The connection is usable again afterwards.
    await c.writeTogether(insert(4));
    expect(rows()).toEqual([4]);
  });

  it('ends this turn’s read snapshot first, so the batch sees what others committed', async () => {
    // Queued before the read below opens this turn's snapshot, so the commit runs before the
    // snapshot's own end of turn.
    const count = c.writeTogether(() => c.get<{ k: number }>('SELECT count(*) AS k FROM t')!.k);
    expect(c.get<{ k: number }>('SELECT count(*) AS k FROM t')!.k).toBe(0);
    const peer = new Database(path);
    peer.prepare('INSERT INTO t (n) VALUES (7)').run();
    peer.close();
    expect(await count).toBe(1);
  });

  it('close commits the writes still queued', async () => {
    const pending = c.writeTogether(insert(5));
    c.close();
    await expect(pending).resolves.toBe(1);
    const check = new Database(path, { readonly: true });
    expect(check.prepare('SELECT n FROM t').all()).toEqual([{ n: 5 }]);
    check.close();
  });
});
