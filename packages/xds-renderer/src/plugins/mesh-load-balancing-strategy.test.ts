// MeshLoadBalancingStrategy: load balancers, hash policies and locality aware endpoints.
import { describe, expect, it } from 'vitest';
import type { Cluster, ClusterLoadAssignment, JsonObject, Listener } from '../envoy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const strategy = targetRefPolicy('MeshLoadBalancingStrategy', 'lb', {
  targetRef: { kind: 'Mesh' },
  to: [
    {
      targetRef: { kind: 'MeshService', name: 'backend' },
      default: {
        loadBalancer: { type: 'RingHash', ringHash: { hashFunction: 'MurmurHash2', minRingSize: 64, maxRingSize: 1024, hashPolicies: [{ type: 'Header', header: { name: 'x-user' }, terminal: true }, { type: 'SourceIP', connection: { sourceIP: true } }] } },
        localityAwareness: { localZone: { affinityTags: [{ key: 'version' }] }, crossZone: { failover: [{ to: { type: 'Only', zones: ['east'] } }], failoverThreshold: { percentage: 40 } } },
      },
    },
    { targetRef: { kind: 'MeshService', name: 'redis' }, default: { loadBalancer: { type: 'Maglev', maglev: { tableSize: 65537 } } } },
    { targetRef: { kind: 'MeshService', name: 'other-backend' }, default: { loadBalancer: { type: 'LeastRequest', leastRequest: { choiceCount: 4 } } } },
  ],
});

describe('MeshLoadBalancingStrategy', () => {
  const topology = targetRefTopology('STRICT');
  const before = topology.render(topology.web1, {});
  const after = topology.render(topology.web1, { MeshLoadBalancingStrategy: [strategy] });
  const cluster = (name: string) => after.clusters.find((candidate) => candidate.name === name) as Cluster;
  const endpoints = (name: string) => after.endpoints.find((candidate) => candidate.clusterName === name) as ClusterLoadAssignment;

  it('configures clusters, routes and endpoints as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-load-balancing-strategy.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('sets the load balancer of each service, and hashes the routes of ring hash', () => {
    expect(cluster('backend')).toMatchObject({ lbPolicy: 'RING_HASH', ringHashLbConfig: { minimumRingSize: '64', maximumRingSize: '1024', hashFunction: 'MURMUR_HASH_2' } });
    expect(cluster('redis')).toMatchObject({ lbPolicy: 'MAGLEV', maglevLbConfig: { tableSize: '65537' } });
    expect(cluster('other-backend')).toMatchObject({ lbPolicy: 'LEAST_REQUEST', leastRequestLbConfig: { choiceCount: 4 } });
    const listener = after.listeners.find((candidate) => candidate.name === 'outbound:127.0.0.1:10001') as Listener;
    const hcm = ((listener.filterChains as JsonObject[])[0]?.filters as JsonObject[])[0]?.typedConfig as JsonObject;
    const route = (((hcm.routeConfig as JsonObject).virtualHosts as JsonObject[])[0]?.routes as JsonObject[])[0]?.route as JsonObject;
    expect(route.hashPolicy).toEqual([{ header: { headerName: 'x-user' }, terminal: true }, { connectionProperties: { sourceIp: true } }]);
  });

  it("puts this zone's endpoints first, by the tags they share with the proxy, then the zones failover allows", () => {
    expect(cluster('backend').commonLbConfig).toEqual({ localityWeightedLbConfig: {} });
    expect(endpoints('backend')).toMatchObject({
      policy: { overprovisioningFactor: 200 },
      endpoints: [
        { locality: { zone: 'east' }, priority: 1, lbEndpoints: [expect.objectContaining({ endpoint: { address: { socketAddress: { address: '10.1.0.3', portValue: 9090 } } } })] },
        { locality: { zone: 'west' }, loadBalancingWeight: 1, lbEndpoints: [expect.objectContaining({ endpoint: { address: { socketAddress: { address: '10.0.0.3', portValue: 9090 } } } })] },
        { locality: { zone: 'west', subZone: 'version=v1' }, loadBalancingWeight: 9, lbEndpoints: [expect.objectContaining({ endpoint: { address: { socketAddress: { address: '10.0.0.2', portValue: 9090 } } } })] },
      ],
    });
    // The assignment is the proxy's own: other proxies keep the shared one.
    expect(before.endpoints.find((candidate) => candidate.clusterName === 'backend')?.policy).toBeUndefined();
  });

  it('sends the other zones through the zone egress when the mesh routes through it', () => {
    const egress = targetRefTopology('STRICT', { zoneEgress: true });
    const config = egress.render(egress.web1, { MeshLoadBalancingStrategy: [strategy] });
    const zones = ((config.endpoints.find((candidate) => candidate.clusterName === 'backend') as ClusterLoadAssignment).endpoints as JsonObject[]).map((group) => group.locality);
    expect(zones).toEqual([{ zone: expect.stringMatching(/^egress_/) }, { zone: 'west' }, { zone: 'west', subZone: 'version=v1' }]);
    expectEnvoyAccepts(config);
  });
});
