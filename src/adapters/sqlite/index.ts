export { SqliteMetadataStore } from './store.js';
