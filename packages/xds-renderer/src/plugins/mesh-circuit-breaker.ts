// MeshCircuitBreaker (docs/policies.md): connection limits and outlier detection on the local
// cluster of each selected inbound (`from`) and on the clusters of the outbounds' services
// (`to`), in place of what a CircuitBreaker set.
import type { MeshCircuitBreakerConf } from '@mesh/model';
import type { Cluster, JsonObject } from '../envoy.js';
import { localClusterName } from '../names.js';
import { ORIGIN } from '../resource-set.js';
import {
  clustersOfOutboundServices,
  confOf,
  decimalValue,
  gatewayClusters,
  inboundRulesAt,
  inboundSites,
  MESH_SUBSET,
  meshServiceSubset,
  type Plugin,
  protoDuration,
} from './common.js';

type OutlierDetection = NonNullable<MeshCircuitBreakerConf['outlierDetection']>;
type Detectors = NonNullable<OutlierDetection['detectors']>;

function configureConnectionLimits(cluster: Cluster, limits: MeshCircuitBreakerConf['connectionLimits']): void {
  if (!limits) return;
  const thresholds: JsonObject = {};
  for (const key of ['maxConnectionPools', 'maxConnections', 'maxPendingRequests', 'maxRetries', 'maxRequests'] as const) {
    if (limits[key] !== undefined) thresholds[key] = limits[key];
  }
  cluster.circuitBreakers = { thresholds: [thresholds] };
}

/** Each detector enforced fully when configured, not at all otherwise. */
function configureDetectors(outlier: JsonObject, detectors: Detectors): void {
  const { totalFailures, localOriginFailures, gatewayFailures, successRate, failurePercentage } = detectors;
  outlier.enforcingConsecutive5xx = totalFailures ? 100 : 0;
  if (totalFailures?.consecutive !== undefined) outlier.consecutive5xx = totalFailures.consecutive;
  outlier.enforcingConsecutiveLocalOriginFailure = localOriginFailures ? 100 : 0;
  if (localOriginFailures?.consecutive !== undefined) outlier.consecutiveLocalOriginFailure = localOriginFailures.consecutive;
  outlier.enforcingConsecutiveGatewayFailure = gatewayFailures ? 100 : 0;
  if (gatewayFailures?.consecutive !== undefined) outlier.consecutiveGatewayFailure = gatewayFailures.consecutive;
  // The local origin variants take effect only when local origin errors are split.
  outlier.enforcingSuccessRate = successRate ? 100 : 0;
  outlier.enforcingLocalOriginSuccessRate = successRate ? 100 : 0;
  if (successRate?.minimumHosts !== undefined) outlier.successRateMinimumHosts = successRate.minimumHosts;
  if (successRate?.requestVolume !== undefined) outlier.successRateRequestVolume = successRate.requestVolume;
  if (successRate?.standardDeviationFactor !== undefined) outlier.successRateStdevFactor = Math.trunc(decimalValue(successRate.standardDeviationFactor) * 1000);
  outlier.enforcingFailurePercentage = failurePercentage ? 100 : 0;
  outlier.enforcingFailurePercentageLocalOrigin = failurePercentage ? 100 : 0;
  if (failurePercentage?.minimumHosts !== undefined) outlier.failurePercentageMinimumHosts = failurePercentage.minimumHosts;
  if (failurePercentage?.requestVolume !== undefined) outlier.failurePercentageRequestVolume = failurePercentage.requestVolume;
  if (failurePercentage?.threshold !== undefined) outlier.failurePercentageThreshold = failurePercentage.threshold;
}

function configureOutlierDetection(cluster: Cluster, detection: OutlierDetection | undefined): void {
  if (!detection || detection.disabled) return;
  const outlier: JsonObject = {};
  if (detection.interval !== undefined) outlier.interval = protoDuration(detection.interval);
  if (detection.baseEjectionTime !== undefined) outlier.baseEjectionTime = protoDuration(detection.baseEjectionTime);
  if (detection.splitExternalAndLocalErrors) outlier.splitExternalLocalOriginErrors = true;
  if (detection.maxEjectionPercent !== undefined) outlier.maxEjectionPercent = detection.maxEjectionPercent;
  if (detection.detectors) configureDetectors(outlier, detection.detectors);
  cluster.outlierDetection = outlier;
}

function configureCluster(cluster: Cluster, conf: MeshCircuitBreakerConf | undefined): void {
  if (!conf) return;
  configureConnectionLimits(cluster, conf.connectionLimits);
  configureOutlierDetection(cluster, conf.outlierDetection);
}

export const applyMeshCircuitBreaker: Plugin<'MeshCircuitBreaker'> = (input, rules) => {
  for (const { inbound } of inboundSites(input)) {
    const inboundRules = inboundRulesAt(rules, inbound.interface.dataplaneIp, inbound.interface.dataplanePort);
    // The reference looks the local cluster up by the inbound's own port: one whose application listens elsewhere is left alone.
    const cluster = input.resources.clusters.get(localClusterName(inbound.interface.dataplanePort));
    if (inboundRules && cluster?.origin === ORIGIN.inbound) configureCluster(cluster.resource, confOf(inboundRules, MESH_SUBSET));
  }
  for (const { cluster, service } of [...clustersOfOutboundServices(input), ...gatewayClusters(input)]) configureCluster(cluster, confOf(rules.to, meshServiceSubset(service)));
};
