import type { CredentialsSignal } from '../sql/store-base.js';
import type { Work } from '../sql/work.js';
import type { Connection } from './database.js';

/**
 * `credentialsEpoch` of the SQLite store. Changes made through this connection bump it directly;
 * commits by any other connection to the file (a `cairn admin` command revoking a key or
 * suspending a tenant while the server runs) show up in `PRAGMA data_version`, which SQLite
 * changes exactly then. Any such commit counts, whatever it touched: those are rare, and a
 * spurious change only costs one key lookup per key.
 *
 * Reading `data_version` opens a read transaction (file locks, about as dear as the query it
 * would save), so it is read once per turn of the event loop: the requests that arrive together
 * share one look, and a change committed elsewhere is seen by every request that starts in a
 * later turn.
 */
export class CredentialsEpoch implements CredentialsSignal {
  private seenDataVersion = -1;
  private epoch = 0;
  private lookedThisTurn = false;
  private readonly nextTurn = () => {
    this.lookedThisTurn = false;
  };

  constructor(private readonly c: Connection) {}

  current(): number {
    if (!this.lookedThisTurn) {
      this.lookedThisTurn = true;
      setImmediate(this.nextTurn);
      const row = this.c.get<{ data_version: number }>('PRAGMA data_version');
      if (row && row.data_version !== this.seenDataVersion) {
        this.seenDataVersion = row.data_version;
        this.epoch++;
      }
    }
    return this.epoch;
  }

  /**
   * Called before a local change is made: a lookup that started before it and finishes after it
   * is then stored under the old epoch, which no later request asks for.
   */
  changed(): void {
    this.epoch++;
  }

  /** Other processes see the commit itself (data_version): nothing to send. */
  *announce(): Work<void> {}
}
