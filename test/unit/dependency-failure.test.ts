import { describe, expect, it } from 'vitest';
import { Database } from '../../src/adapters/postgres/database.js';
import { dependencyFailure } from '../../src/http/errors/dependency.js';

/**
 * A stopped PostgreSQL refuses connections (ECONNREFUSED), which alone reads as a network fault of
 * no named service: the adapter names it, so the answer and the metrics say "database".
 */
describe('a database that refuses connections', () => {
  it('is reported as the database failing, for a statement and for a transaction', async () => {
    // Port 9 (discard) on loopback: nothing listens, so every connect is refused at once.
    const db = new Database({ connectionString: 'postgres://nobody@127.0.0.1:9/none', maxConnections: 1 });
    try {
      for (const call of [() => db.query('SELECT 1'), () => db.tx(async (q) => q.query('SELECT 1'))]) {
        const err = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(dependencyFailure(err)?.dependency).toBe('database');
        // An operator reading the log learns which address refused.
        expect((err as Error).message).toContain('ECONNREFUSED 127.0.0.1:9');
      }
    } finally {
      await db.close();
    }
  });
});
