export type * from './store.js';
export { SqliteResourceStore, type SqliteStoreOptions } from './sqlite-store.js';
