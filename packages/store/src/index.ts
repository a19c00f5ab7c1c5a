export type * from './store.js';
export { SqliteResourceStore, type SqliteStoreOptions } from './sqlite-store.js';
export { ResourceIndex } from './resource-index.js';
