export { ResourceManager, type KindKey, type ResourceManagerOptions, type WriteOptions, type WriteOrigin, type WriteResult } from './manager.js';
export { ADMIN, ANONYMOUS, isAdmin, requireAccess, type Caller } from './access.js';
export type { KindHooks, ManagerContext, Spec } from './hooks.js';
export { syncCursorSetting, syncedKind, type SyncBatch, type SyncedCopy, type SyncedKindBatch } from './sync.js';
