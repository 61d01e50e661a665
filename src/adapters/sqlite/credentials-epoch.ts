import type { CredentialsSignal } from '../sql/tenants.js';
import type { Work } from '../sql/work.js';
import type { Connection } from './database.js';

/**
 * `credentialsEpoch` of the SQLite store. Changes made through this connection bump it directly;
 * commits by any other connection to the file (`cairn admin` revoking a key while the server
 * runs) change `PRAGMA data_version`. Any such commit counts, whatever it touched: they are rare,
 * and a spurious change costs one key lookup per key. It is read once per turn of the event loop
 * (a read is about as dear as the query it saves).
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

  /** Before a local change (see SqlTenantStore.changingCredentials). */
  changed(): void {
    this.epoch++;
  }

  /** Other processes see the commit itself (data_version): nothing to send. */
  *announce(): Work<void> {}
}
