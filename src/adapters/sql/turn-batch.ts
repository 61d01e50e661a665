/**
 * Point reads asked for during one turn of the event loop, answered together at the turn's end
 * (setImmediate; why, in docs/architecture.md "Reads on the hot path"). A lone read waits only for
 * the rest of its turn.
 *
 * `load` gets the keys in call order (the same key may appear twice) and returns one value per
 * key, in that order, or a promise of them. If it throws or rejects, every read of the batch
 * rejects with its error. A loader reading key by key puts a KeyFailure in a failed key's place
 * instead, so that one tenant's bad row fails only its own read. Batches hold at most `maxKeys`.
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
