export { ResourceManager, type ResourceManagerOptions, type WriteResult } from './manager.js';
export type { Spec } from './hooks.js';
