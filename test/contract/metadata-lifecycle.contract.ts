import { beforeEach, describe, expect, it } from 'vitest';
import type { MetadataStore, TenantRow } from '../../src/ports/metadata-store.js';
import { type MakeMetadataStore, metadataFixture } from './metadata-fixture.js';

/**
 * The MetadataLifecycle contract: migrating is safe to repeat, a setting is written once.
 * Exercised through the port only, on each adapter (SQLite, PostgreSQL), from the shared fixture
 * (metadata-fixture.ts): an empty database, migrated as every start does, with tenants A and B.
 */
export function metadataLifecycleContract(name: string, makeStore: MakeMetadataStore): void {
  describe(`MetadataLifecycle contract: ${name}`, () => {
    const { state } = metadataFixture(makeStore);
    let store: MetadataStore;
    let A: TenantRow;
    let schemaVersion: number;
    beforeEach(() => {
      ({ store, A, schemaVersion } = state);
    });

    describe('schema and settings', () => {
      it('migrate is safe to repeat, reports that nothing was applied, and keeps data', async () => {
        expect(await store.migrate()).toEqual({ from: schemaVersion, to: schemaVersion });
        expect(await store.getTenant(A.id)).toEqual(A);
      });

      it('getOrSetSetting: the first writer wins', async () => {
        expect(await store.getOrSetSetting('signing_secret', 'first')).toBe('first');
        expect(await store.getOrSetSetting('signing_secret', 'second')).toBe('first');
        expect(await store.getOrSetSetting('other', 'x')).toBe('x');
      });
    });
  });
}
