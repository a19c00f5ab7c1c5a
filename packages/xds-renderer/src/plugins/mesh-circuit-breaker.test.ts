// MeshCircuitBreaker: connection limits and outlier detection of outbound and inbound clusters.
import { describe, expect, it } from 'vitest';
import type { Cluster } from '../envoy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const topology = targetRefTopology('STRICT');

const breaker = targetRefPolicy('MeshCircuitBreaker', 'breaker', {
  targetRef: { kind: 'Mesh' },
  from: [{ targetRef: { kind: 'Mesh' }, default: { connectionLimits: { maxConnections: 10, maxPendingRequests: 5 } } }],
  to: [
    { targetRef: { kind: 'Mesh' }, default: { connectionLimits: { maxConnections: 100, maxConnectionPools: 4, maxPendingRequests: 50, maxRequests: 200, maxRetries: 2 } } },
    {
      targetRef: { kind: 'MeshService', name: 'backend' },
      default: {
        outlierDetection: {
          interval: '5s',
          baseEjectionTime: '30s',
          maxEjectionPercent: 20,
          splitExternalAndLocalErrors: true,
          detectors: {
            totalFailures: { consecutive: 10 },
            gatewayFailures: { consecutive: 5 },
            localOriginFailures: { consecutive: 7 },
            successRate: { minimumHosts: 5, requestVolume: 10, standardDeviationFactor: '1.9' },
            failurePercentage: { requestVolume: 10, minimumHosts: 5, threshold: 85 },
          },
        },
      },
    },
    { targetRef: { kind: 'MeshService', name: 'redis' }, default: { outlierDetection: { disabled: true, interval: '1s' } } },
  ],
});

const before = topology.render(topology.web1, {});
const after = topology.render(topology.web1, { MeshCircuitBreaker: [breaker] });
const cluster = (name: string) => after.clusters.find((candidate) => candidate.name === name) as Cluster;

describe('MeshCircuitBreaker', () => {
  it('configures the clusters as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-circuit-breaker.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('replaces the connection limits of a CircuitBreaker, and detects outliers as told', () => {
    expect(cluster('backend').circuitBreakers).toEqual({ thresholds: [{ maxConnectionPools: 4, maxConnections: 100, maxPendingRequests: 50, maxRetries: 2, maxRequests: 200 }] });
    expect(cluster('backend').outlierDetection).toMatchObject({ consecutive5xx: 10, enforcingConsecutive5xx: 100, successRateStdevFactor: 1900, failurePercentageThreshold: 85 });
    // A disabled detection leaves the cluster's as the CircuitBreaker set it.
    const redisBefore = before.clusters.find((candidate) => candidate.name === 'redis') as Cluster;
    expect(cluster('redis').outlierDetection).toEqual(redisBefore.outlierDetection);
  });

  it('limits the connections of an inbound whose application listens on its own port', () => {
    expect(cluster('localhost:8100').circuitBreakers).toEqual({ thresholds: [{ maxConnections: 10, maxPendingRequests: 5 }] });
    // The reference looks the local cluster up by the inbound's port: web's application listens on 8081.
    expect(cluster('localhost:8081').circuitBreakers).toBeUndefined();
  });
});
