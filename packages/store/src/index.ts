export type * from './store.js';
export { ResourceIndex, listFilterOf } from './resource-index.js';
