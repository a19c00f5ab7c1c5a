export { PostgresResourceStore, type BatchWrite, type Change, type ChangesSince, type PostgresStoreOptions } from './postgres-store.js';
