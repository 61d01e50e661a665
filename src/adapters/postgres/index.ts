export { PostgresAccountStore } from './account-store.js';
export { buildArtifactListQuery, buildSessionListQuery } from './list-queries.js';
export { type MigrationResult, migratePostgres } from './migrate.js';
export { PostgresMetadataStore, type PostgresMetadataStoreOptions } from './store.js';
