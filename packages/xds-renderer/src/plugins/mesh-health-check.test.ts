// MeshHealthCheck: an active health check per outbound cluster, by the service's protocol.
import { describe, expect, it } from 'vitest';
import type { Cluster } from '../envoy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const topology = targetRefTopology('STRICT');

const checks = targetRefPolicy('MeshHealthCheck', 'checks', {
  targetRef: { kind: 'MeshService', name: 'web' },
  to: [
    {
      targetRef: { kind: 'Mesh' },
      default: {
        interval: '10s',
        healthyThreshold: 2,
        tcp: { send: 'ping', receive: ['pong'] },
        http: { path: '/health', expectedStatuses: [200, 204], requestHeadersToAdd: { add: [{ name: 'x-check', value: 'a,b' }], set: [{ name: 'x-from', value: 'mesh' }] } },
        grpc: { serviceName: 'health', authority: 'grpc-api.mesh' },
      },
    },
    {
      targetRef: { kind: 'MeshService', name: 'backend' },
      default: { healthyPanicThreshold: '62.5', failTrafficOnPanic: true, eventLogPath: '/tmp/hc.log', alwaysLogHealthCheckFailures: true, reuseConnection: false, noTrafficInterval: '1m' },
    },
    // HTTP turned off: the TCP check takes over.
    { targetRef: { kind: 'MeshService', name: 'other-backend' }, default: { http: { disabled: true } } },
  ],
});

const before = topology.render(topology.web1, {});
const after = topology.render(topology.web1, { MeshHealthCheck: [checks] });
const cluster = (name: string) => after.clusters.find((candidate) => candidate.name === name) as Cluster;

describe('MeshHealthCheck', () => {
  it('adds health checks as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-health-check.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('checks each service in its protocol, with the proxy tags header on HTTP checks', () => {
    expect(cluster('backend').healthChecks).toEqual([
      expect.objectContaining({
        interval: '10s',
        timeout: '15s',
        unhealthyThreshold: 5,
        healthyThreshold: 2,
        httpHealthCheck: expect.objectContaining({ path: '/health', expectedStatuses: [{ start: '200', end: '201' }, { start: '204', end: '205' }] }),
      }),
    ]);
    expect(cluster('backend').commonLbConfig).toEqual({ healthyPanicThreshold: { value: 62.5 }, zoneAwareLbConfig: { failTrafficOnPanic: true } });
    expect(cluster('grpc-api').healthChecks).toEqual([expect.objectContaining({ grpcHealthCheck: { serviceName: 'health', authority: 'grpc-api.mesh' } })]);
    expect(cluster('redis').healthChecks).toEqual([expect.objectContaining({ tcpHealthCheck: { send: { text: '70696e67' }, receive: [{ text: '706f6e67' }] } })]);
    expect(cluster('other-backend').healthChecks).toEqual([expect.objectContaining({ tcpHealthCheck: expect.any(Object) })]);
  });
});
