import { beforeEach, describe, expect, it } from 'vitest';
import { buildMetadataDensityQuery } from '../../src/adapters/sql/list-queries.js';
import type { SqlDriver } from '../../src/adapters/sql/runner.js';
import { run } from '../../src/adapters/sql/work.js';
import type { TenantRow } from '../../src/ports/metadata-store.js';
import { type MakeMetadataStore, metadataFixture, T0 } from './metadata-fixture.js';

/**
 * What the SQL layer relies on below the ports, on each engine through its own driver: the
 * statements only the planner's choices depend on (nothing a port's answer shows), and the
 * driver's unit of work.
 */
export function sqlLayerContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`SQL layer: ${name}`, () => {
    const { state, row, put } = metadataFixture(makeStore);
    let sql: SqlDriver;
    let A: TenantRow;
    beforeEach(() => {
      sql = (state.store as unknown as { sql: SqlDriver }).sql;
      A = state.A;
    });

    it('reads each metadata pair’s density in one statement: rows up to the probe, and how far back', async () => {
      for (let i = 0; i < 5; i++) await put(row(A.id, { metadata: { kind: 'k1', n: i }, createdAt: T0 + i }));
      for (let i = 0; i < 3; i++) await put(row(A.id, { metadata: { kind: 'k2' }, createdAt: T0 + 100 + i }));
      await put(row(state.B.id, { metadata: { kind: 'k2' }, createdAt: T0 + 500 }));
      const pairs = [
        { key: 'kind', value: 'k1' },
        { key: 'kind', value: 'none' },
        { key: 'kind', value: 'k2' },
      ];
      const q = buildMetadataDensityQuery(sql.dialect, A.id, pairs, 4);
      const found = await sql.all<{ i: number; n: number; oldest: number | null }>(q.sql, q.params);
      const byPair = [0, 1, 2].map((i) => found.find((r) => Number(r.i) === i));
      expect(byPair.map((r) => r && { n: Number(r.n), oldest: r.oldest === null ? null : Number(r.oldest) })).toEqual([
        { n: 4, oldest: T0 + 1 },
        { n: 0, oldest: null },
        { n: 3, oldest: T0 + 100 },
      ]);
    });

    it('a unit of work that throws leaves nothing of its writes', async () => {
      const boom = new Error('boom');
      await expect(
        sql.write(function* () {
          yield* run('UPDATE tenants SET storage_bytes = 7 WHERE id = ?', [A.id]);
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(
        await sql.one<{ storage_bytes: number }>('SELECT storage_bytes FROM tenants WHERE id = ?', [A.id]),
      ).toEqual({ storage_bytes: 0 });
    });
  });
}
