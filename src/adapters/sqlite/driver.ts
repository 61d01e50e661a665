import { type NewEvent, writeEvents } from '../sql/events.js';
import { SqlDriver } from '../sql/runner.js';
import { driveSync, type Step, type Work } from '../sql/work.js';
import type { Connection } from './database.js';
import { SQLITE } from './dialect.js';

/**
 * The SQL layer on the embedded connection. Everything runs synchronously: a `write` is one
 * generator run to its end inside BEGIN IMMEDIATE, so no other work of this process interleaves.
 *
 * The writes sharing a group commit (writeTogether) hold back their change-feed events: those of
 * each write that succeeded are written once all have run, just before the commit, in the order
 * the writes ran. One head bump per tenant and one insert then serve the whole batch, where each
 * write's own would repeat them; a write rolled back to its savepoint takes its events with it.
 */
export class SqliteDriver extends SqlDriver {
  readonly dialect = SQLITE;
  private readonly c: Connection;
  /** The running write's events while it runs inside a group commit; null outside one. */
  private heldBack: NewEvent[] | null = null;
  /** The events of the group commit's writes kept so far (savepoint released). */
  private batchEvents: NewEvent[] = [];

  // No parameter property: a migration test runs this file with Node's type stripping.
  constructor(c: Connection) {
    super();
    this.c = c;
    c.groupCommit = {
      began: () => {
        this.batchEvents = [];
      },
      ending: () => {
        const events = this.batchEvents;
        this.batchEvents = [];
        driveSync(writeEvents(SQLITE, events), this.step);
      },
    };
  }

  private readonly step = (step: Step): unknown => {
    if (step.op === 'append') {
      if (this.heldBack) this.heldBack.push(...step.events);
      else driveSync(writeEvents(SQLITE, step.events), this.step);
      return undefined;
    }
    // better-sqlite3 binds numbers, strings, bigints, buffers and null; a boolean is stored as 0/1.
    const params = step.params.map((p) => (typeof p === 'boolean' ? Number(p) : p));
    if (step.op === 'exec') return void this.c.db.exec(step.sql);
    if (step.op === 'run') return this.c.run(step.sql, ...params);
    this.c.read();
    const statement = this.c.prepared(step.sql, step.op === 'row' || step.op === 'rows');
    if (step.op === 'one' || step.op === 'row') return statement.get(...params) ?? null;
    return statement.all(...params);
  };

  protected async exec(step: Step): Promise<unknown> {
    return this.step(step);
  }

  change<R>(sql: string, params: readonly unknown[]): Promise<R | null> {
    return this.c.writeTogether(() => this.step({ op: 'one', sql, params }) as R | null);
  }

  async write<T>(work: () => Work<T>): Promise<T> {
    return this.c.write(() => driveSync(work(), this.step));
  }

  writeTogether<T>(work: () => Work<T>): Promise<T> {
    const own: NewEvent[] = [];
    return this.c.writeTogether(
      () => {
        this.heldBack = own;
        try {
          return driveSync(work(), this.step);
        } finally {
          this.heldBack = null;
        }
      },
      () => this.batchEvents.push(...own),
    );
  }
}
