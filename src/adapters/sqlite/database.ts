import Database from 'better-sqlite3';

type Db = Database.Database;
type Statement = Database.Statement<unknown[], unknown>;

/**
 * One connection with its prepared statements cached by SQL text, and the transactions every
 * write goes through.
 *
 * Reads share one read transaction per turn of the event loop: outside one, every statement opens
 * and closes its own (file locks on the WAL index), which cost more than a GET's point lookups.
 * The next turn sees everything committed since. A write ends the snapshot first, so what it
 * commits is seen by every later read.
 */
export class Connection {
  readonly db: Db;
  private readonly statements = new Map<string, Statement>();
  private readonly rawStatements = new Map<string, Statement>();
  private snapshot = false;
  private queued: {
    fn: () => unknown;
    kept: (() => void) | undefined;
    resolve(value: unknown): void;
    reject(err: unknown): void;
  }[] = [];
  private readonly commitQueued = () => this.flushQueued();
  /**
   * Told when a group commit's transaction has begun, and when its writes have all run (before
   * COMMIT; a throw there rolls the whole batch back and rejects every write).
   */
  groupCommit: { began(): void; ending(): void } = { began() {}, ending() {} };
  private readonly endSnapshot = () => {
    if (!this.snapshot) return;
    this.snapshot = false;
    if (this.db.open && this.db.inTransaction) this.prepared('COMMIT').run();
  };

  constructor(path: string) {
    this.db = new Database(path);
    // busy_timeout first: switching to WAL takes a lock another process may hold.
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('journal_mode = WAL');
    // Under WAL, NORMAL loses at most the last commits on power loss, never consistency.
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
  }

  /** The statement for `sql`, prepared once; a `raw` one returns rows as arrays of values (see Joined). */
  prepared(sql: string, raw = false): Statement {
    const cache = raw ? this.rawStatements : this.statements;
    let s = cache.get(sql);
    if (!s) {
      s = raw ? this.db.prepare(sql).raw(true) : this.db.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  }

  /** Before a read: inside a write, nothing to do; otherwise join (or open) this turn's snapshot. */
  read(): void {
    if (this.snapshot || this.db.inTransaction) return;
    this.prepared('BEGIN').run();
    this.snapshot = true;
    setImmediate(this.endSnapshot);
  }

  get<T>(sql: string, ...params: unknown[]): T | undefined {
    this.read();
    return this.prepared(sql).get(...params) as T | undefined;
  }

  run(sql: string, ...params: unknown[]): number {
    this.endSnapshot();
    return this.prepared(sql).run(...params).changes;
  }

  /**
   * Runs `fn` in a BEGIN IMMEDIATE transaction: the write lock is taken up front, so two processes
   * on one file serialize instead of failing with SQLITE_BUSY on lock upgrade. A throw rolls back.
   */
  write<T>(fn: () => T): T {
    this.endSnapshot();
    return this.db.transaction(fn).immediate();
  }

  /**
   * Group commit: runs `fn` in a write transaction shared with the other writes queued during
   * this turn, and settles once it has committed. Concurrent uploads touch the same pages (the
   * newest leaf of each index, the tenant's row), so one commit writes a fraction of the WAL pages
   * separate ones would. Each write runs in its own savepoint, so one that throws is rolled back
   * and rejected alone; if the commit fails, all of them reject. `kept` is called once `fn`'s
   * changes are part of the batch (its savepoint released), before the batch commits.
   */
  writeTogether<T>(fn: () => T, kept?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ fn, kept, resolve: resolve as (value: unknown) => void, reject });
      if (this.queued.length === 1) setImmediate(this.commitQueued);
    });
  }

  private flushQueued(): void {
    const batch = this.queued;
    if (batch.length === 0) return;
    this.queued = [];
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.endSnapshot();
      this.prepared('BEGIN IMMEDIATE').run();
      try {
        this.groupCommit.began();
        // A lone write needs no savepoint: if it throws, the whole transaction rolls back.
        const alone = batch.length === 1;
        for (const item of batch) {
          const outcome = alone ? { ok: true, value: item.fn() } : this.inSavepoint(item.fn);
          if (outcome.ok) item.kept?.();
          outcomes.push(outcome);
        }
        this.groupCommit.ending();
        this.prepared('COMMIT').run();
      } catch (err) {
        if (this.db.inTransaction) this.prepared('ROLLBACK').run();
        throw err;
      }
    } catch (err) {
      for (const item of batch) item.reject(err);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.value);
    });
  }

  private inSavepoint(fn: () => unknown): { ok: boolean; value: unknown } {
    this.prepared('SAVEPOINT queued_write').run();
    try {
      const value = fn();
      this.prepared('RELEASE queued_write').run();
      return { ok: true, value };
    } catch (err) {
      this.prepared('ROLLBACK TO queued_write').run();
      this.prepared('RELEASE queued_write').run();
      return { ok: false, value: err };
    }
  }

  close(): void {
    this.flushQueued();
    this.endSnapshot();
    this.statements.clear();
    this.rawStatements.clear();
    if (this.db.open) this.db.close();
  }
}
