/**
 * Point reads asked for during one turn of the event loop, answered together at the turn's end
 * (setImmediate). Under load many requests reach their database read in the same turn (each
 * socket's data is handled in the same poll phase). A lone read waits only for the rest of its
 * turn, not for a timer.
 *
 * On PostgreSQL the batch is one query: it saves a Bind/Execute/Sync cycle and this process a
 * socket write and read per extra key. On SQLite the reads run one after another, synchronously;
 * there the gain is the turn's shape: all requests parsed first, then all reads, then all answers
 * written together. Answered one by one inside each socket's read callback instead, a GET took
 * half the GETs per second on SQLite (an A/B, docs/architecture.md).
 *
 * `load` gets the keys in call order (the same key may appear twice) and returns one value per
 * key, in that order, or a promise of them. If it throws or rejects, every read of that batch
 * rejects with its error, as each would have alone. A loader that reads key by key returns a
 * KeyFailure in a failed key's place instead, so that only that read rejects: one tenant's bad
 * row must not fail the other tenants' reads that happened to share its turn. Batches hold at
 * most `maxKeys`; more keys in one turn make several loads.
 */
export class TurnBatch<K, V> {
  private pending: Pending<K, V>[] = [];

  constructor(
    private readonly load: (keys: K[]) => Loaded<V>[] | Promise<Loaded<V>[]>,
    private readonly maxKeys = 100,
  ) {}

  get(key: K): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      this.pending.push({ key, resolve, reject });
      if (this.pending.length === 1) setImmediate(this.flush);
    });
  }

  private readonly flush = (): void => {
    const all = this.pending;
    this.pending = [];
    for (let i = 0; i < all.length; i += this.maxKeys) this.run(all.slice(i, i + this.maxKeys));
  };

  private run(batch: Pending<K, V>[]): void {
    let loaded: Loaded<V>[] | Promise<Loaded<V>[]>;
    try {
      loaded = this.load(batch.map((item) => item.key));
    } catch (err) {
      // A synchronous loader's throw, inside setImmediate: it must reach the readers, not the process.
      fail(batch, err);
      return;
    }
    if (Array.isArray(loaded)) settle(batch, loaded);
    else
      loaded.then(
        (values) => settle(batch, values),
        (err: unknown) => fail(batch, err),
      );
  }
}

/** One key's own error, in its place among a batch's values (see TurnBatch). */
export class KeyFailure {
  constructor(readonly error: unknown) {}
}

type Loaded<V> = V | KeyFailure;

interface Pending<K, V> {
  key: K;
  resolve(value: V): void;
  reject(err: unknown): void;
}

function settle<K, V>(batch: Pending<K, V>[], values: Loaded<V>[]): void {
  batch.forEach((item, i) => {
    const value = values[i];
    if (value instanceof KeyFailure) item.reject(value.error);
    else item.resolve(value as V);
  });
}

function fail<K, V>(batch: Pending<K, V>[], err: unknown): void {
  for (const item of batch) item.reject(err);
}
