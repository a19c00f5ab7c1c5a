export { connectionConfig, PostgresResourceStore, type PostgresStoreOptions } from './postgres-store.js';
export { PostgresLeaderElection, type LeaderElectionOptions } from './leader.js';
