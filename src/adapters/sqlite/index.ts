export { SqliteAccountStore } from './account-store.js';
export { buildArtifactListQuery, buildSessionListQuery } from './list-queries.js';
export { SqliteMetadataStore, type SqliteMetadataStoreOptions } from './store.js';
