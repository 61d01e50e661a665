import type { Connection } from './database.js';

/**
 * `credentialsEpoch` of the SQLite store. Changes made through this connection bump it directly;
 * commits by any other connection to the file (a `cairn admin` command revoking a key or
 * suspending a tenant while the server runs) show up in `PRAGMA data_version`, which SQLite
 * changes exactly then and which costs no I/O to read. Any such commit counts, whatever it
 * touched: those are rare, and a spurious change only costs one key lookup per key.
 */
export class CredentialsEpoch {
  private seenDataVersion = -1;
  private epoch = 0;

  constructor(private readonly c: Connection) {}

  current(): number {
    const row = this.c.get<{ data_version: number }>('PRAGMA data_version');
    if (row && row.data_version !== this.seenDataVersion) {
      this.seenDataVersion = row.data_version;
      this.epoch++;
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
}
