/**
 * Point reads asked for during one turn of the event loop, answered by one query at the turn's
 * end. Under load many requests reach their database read in the same turn (each socket's data
 * is handled in the same poll phase); one round trip for all of them saves PostgreSQL a
 * Bind/Execute/Sync cycle and this process a socket write and read per extra key. A lone read
 * waits only for the rest of its turn (setImmediate), not for a timer.
 *
 * `load` gets the keys in call order (the same key may appear twice) and returns one value per
 * key, in that order. If it throws, every read of that batch rejects with its error, as each
 * would have alone. Batches hold at most `maxKeys`; more keys in one turn make several queries.
 */
export class TurnBatch<K, V> {
  private pending: { key: K; resolve(value: V): void; reject(err: unknown): void }[] = [];

  constructor(
    private readonly load: (keys: K[]) => Promise<V[]>,
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

  private run(batch: TurnBatch<K, V>['pending']): void {
    this.load(batch.map((item) => item.key)).then(
      (values) => {
        batch.forEach((item, i) => {
          item.resolve(values[i] as V);
        });
      },
      (err: unknown) => {
        for (const item of batch) item.reject(err);
      },
    );
  }
}
