import type { ArtifactQuery, SessionQuery } from '../../ports/metadata-store.js';
import * as lists from '../sql/list-queries.js';
import { numberedPlaceholders } from '../sql/runner.js';
import { POSTGRES } from './dialect.js';

export type { MigrationResult } from '../../ports/metadata-store.js';
/** The shared SQL AccountStore, under the name this engine's callers know it by. */
export { SqlAccountStore as PostgresAccountStore } from '../sql/account-store.js';
export { migratePostgres, PostgresMetadataStore, type PostgresMetadataStoreOptions } from './store.js';

/** The list statements as PostgreSQL gets them (for tests that look at their plans). */
export function buildArtifactListQuery(tenantId: string, q: ArtifactQuery): { text: string; values: unknown[] } {
  const { sql, params } = lists.buildArtifactListQuery(POSTGRES, tenantId, q);
  return { text: numberedPlaceholders(sql), values: params };
}

export function buildSessionListQuery(tenantId: string, q: SessionQuery): { text: string; values: unknown[] } {
  const { sql, params } = lists.buildSessionListQuery(POSTGRES, tenantId, q);
  return { text: numberedPlaceholders(sql), values: params };
}
