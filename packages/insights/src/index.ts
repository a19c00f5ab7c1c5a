export { dataplaneStatus, isConnected, zoneStatus, type DataplaneStatus } from './status.js';
export type { StoredDataplane, StoredDataplaneInsight, StoredZone, StoredZoneInsight } from './stored.js';
export { dataplaneContribution, type DataplaneContribution, type ProxyType, type ServiceType } from './contribution.js';
export type { MeshInsightSpec, ServiceStat, ServiceStatus, StatusCounts, StatusCountsJson } from './mesh-tally.js';
export {
  InsightAggregator,
  type InsightAggregatorOptions,
  type AppliedListener,
  type InsightChange,
  type GlobalInsight,
  type MeshInsight,
  type ServiceInsight,
  type ServiceRef,
} from './aggregator.js';
