export { connectionConfig, PostgresResourceStore, type BatchWrite, type Change, type ChangesSince, type PostgresStoreOptions } from './postgres-store.js';
export { PostgresLeaderElection, type LeaderElectionOptions } from './leader.js';
