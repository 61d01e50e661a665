import type { ArtifactQuery, SessionQuery } from '../../ports/metadata-store.js';
import * as lists from '../sql/list-queries.js';
import { SQLITE } from './dialect.js';

/** The shared SQL AccountStore, under the name this engine's callers know it by. */
export { SqlAccountStore as SqliteAccountStore } from '../sql/account-store.js';
export { SqliteMetadataStore, type SqliteMetadataStoreOptions } from './store.js';

/** The list statements as SQLite gets them (for tests that look at their plans). */
export const buildArtifactListQuery = (tenantId: string, q: ArtifactQuery) =>
  lists.buildArtifactListQuery(SQLITE, tenantId, q);
export const buildSessionListQuery = (tenantId: string, q: SessionQuery) =>
  lists.buildSessionListQuery(SQLITE, tenantId, q);
