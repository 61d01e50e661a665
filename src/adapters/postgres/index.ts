export { migratePostgres, PostgresMetadataStore } from './store.js';
