export type * from './store.js';
export { ResourceIndex, listFilterOf } from './resource-index.js';
export { parsedSpec } from './parsed-spec.js';
export { StoreEngine, type StoreEngineOptions } from './engine.js';
export { PRUNED_THROUGH_SETTING, type DriverTransaction, type PersistedState, type PersistenceDriver, type ResourceContent, type SharedDatabase } from './driver.js';
