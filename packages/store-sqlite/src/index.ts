export { SqliteResourceStore, type SqliteStoreOptions } from './sqlite-store.js';
