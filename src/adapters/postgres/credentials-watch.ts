import pg from 'pg';
import type { CredentialsSignal } from '../sql/tenants.js';
import { one, type Work } from '../sql/work.js';
import { clientConfig, type PoolOptions } from './database.js';

/** The channel every Cairn instance listens on; the payload names the schema that changed. */
export const CREDENTIALS_CHANNEL = 'cairn_credentials';
/** How an instance's listening connection shows in `pg_stat_activity` (names are cut at 63). */
export const listenerApplicationName = (schema: string | undefined) =>
  `cairn-credentials ${schema ?? 'public'}`.slice(0, 63);
const RECONNECT_MS = 1000;

/**
 * `credentialsEpoch` of the PostgreSQL store. Every instance keeps one connection that LISTENs on
 * `cairn_credentials`; a key revocation or tenant change NOTIFYs in its transaction, so every
 * instance moves its epoch when the change commits. While that connection is down the epoch is
 * `null` (nothing may be cached), and reconnecting moves it. The listener opens on the first
 * question, so commands that never authenticate a key never open it.
 */
export class CredentialsWatch implements CredentialsSignal {
  private epoch = 0;
  private client: pg.Client | undefined;
  private listening = false;
  private started = false;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  /** Names the schema that changed: instances on other schemas of the database ignore it. */
  private readonly payload: string;

  constructor(private readonly options: PoolOptions) {
    this.payload = options.schema ?? '';
  }

  current(): number | null {
    if (!this.started) {
      this.started = true;
      this.connect();
    }
    return this.listening ? this.epoch : null;
  }

  /** After a change through this instance: its own notification may come after the next request. */
  changed(): void {
    this.epoch++;
  }

  /** Tells every instance, this one included, when the transaction commits. */
  *announce(): Work<void> {
    yield* one('SELECT pg_notify(?, ?) AS sent', [CREDENTIALS_CHANNEL, this.payload]);
  }

  private connect(): void {
    if (this.closed) return;
    const client = new pg.Client({
      ...clientConfig(this.options),
      application_name: listenerApplicationName(this.options.schema),
    });
    this.client = client;
    // Whatever went wrong (refused, dropped, ended), the next try is a fresh connection.
    const lost = () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.listening = false;
      this.epoch++;
      client.end().catch(() => {});
      if (!this.closed) this.retry = setTimeout(() => this.connect(), RECONNECT_MS).unref();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (msg) => {
      if (msg.channel === CREDENTIALS_CHANNEL && msg.payload === this.payload) this.epoch++;
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${CREDENTIALS_CHANNEL}`))
      .then(() => {
        if (this.client !== client) return;
        this.epoch++;
        this.listening = true;
      })
      .catch(lost);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => {});
  }
}
