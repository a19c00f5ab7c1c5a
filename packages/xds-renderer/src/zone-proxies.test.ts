// Zone proxies and the targetRef policies: a zone ingress forwards the destinations of
// MeshHTTPRoutes; a zone egress forwards services of other zones to their ingress and takes
// MeshTrafficPermission on external services and MeshLoadBalancingStrategy's locality awareness
// (docs/policies.md, Zone proxies).
import { indexTargetRefPolicies, type TargetRefPoliciesByKind } from '@mesh/policy-matcher';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from './envoy.js';
import type { ProxyConfig } from './proxy.js';
import { externalService, meshContextOf, meshSpec, policy, targetRefPolicy, zoneEgress, zoneIngress } from './test-fixtures.js';
import { expectEnvoyAccepts } from './testing/golden.js';
import { renderZoneEgressConfig, renderZoneIngressConfig } from './zone-proxies.js';

const ingress = (zone: string, address: string, instances: number) =>
  zoneIngress(`ingress-${zone}`, {
    zone,
    networking: { address, port: 10001, advertisedAddress: address, advertisedPort: 10001 },
    availableServices: [{ tags: { 'mesh.io/service': 'backend', 'mesh.io/protocol': 'http', 'mesh.io/zone': zone }, instances, mesh: 'default' }],
  });

const context = meshContextOf({
  meshSpec: meshSpec({ mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] }, routing: { zoneEgress: true } }),
  dataplanes: [],
  policies: {
    TrafficRoute: [policy('TrafficRoute', 'route-all-default', { sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }], conf: { destination: { 'mesh.io/service': '*' } } })],
    TrafficPermission: [policy('TrafficPermission', 'allow-all-default', { sources: [{ match: { 'mesh.io/service': '*' } }], destinations: [{ match: { 'mesh.io/service': '*' } }] })],
  },
  externalServices: [
    externalService('httpbin', { networking: { address: 'httpbin.org:80' }, tags: { 'mesh.io/service': 'httpbin', 'mesh.io/protocol': 'http', 'mesh.io/zone': 'west' } }),
    externalService('ldap', { networking: { address: 'ldap.example.com:389' }, tags: { 'mesh.io/service': 'ldap', 'mesh.io/protocol': 'tcp' } }),
  ],
  extra: { localZone: 'west', zoneIngresses: [ingress('east', '203.0.113.1', 2), ingress('north', '203.0.113.2', 1), ingress('west', '10.0.0.9', 1)] },
});
const egress = zoneEgress('egress-1', { networking: { address: '10.0.1.1', port: 10002 } });

const render = (policies: TargetRefPoliciesByKind): ProxyConfig => renderZoneEgressConfig(egress, [context], {}, new Map([['default', indexTargetRefPolicies({ mesh: 'default', policies })]]));
const chain = (config: ProxyConfig, name: string): JsonObject | undefined => (config.listeners[0]?.filterChains as JsonObject[]).find((candidate) => candidate.name === name);
const rbacOf = (config: ProxyConfig, name: string): JsonObject => (chain(config, name)?.filters as JsonObject[])[0]?.typedConfig as JsonObject;

const mtp = (name: string, service: string, from: object[]) => targetRefPolicy('MeshTrafficPermission', name, { targetRef: { kind: 'MeshService', name: service }, from });
const allowBackend = [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { action: 'Allow' } }];

describe('zone egress', () => {
  it('forwards services of other zones, still encrypted, to their zone ingress by SNI', () => {
    const config = render({});
    const chains = config.listeners[0]?.filterChains as JsonObject[];
    expect(chains[0]).toMatchObject({ filterChainMatch: { serverNames: ['backend{mesh=default}'], transportProtocol: 'tls' } });
    expect(chains[0]?.transportSocket).toBeUndefined();
    const assignment = config.endpoints.find((endpoints) => endpoints.clusterName === 'default:backend');
    // The ingress of this egress's own zone is not one of them.
    const addresses = ((assignment?.endpoints as JsonObject[])[0]?.lbEndpoints as JsonObject[]).map((endpoint) => JSON.stringify(endpoint.endpoint));
    expect(addresses).toEqual([expect.stringContaining('203.0.113.1'), expect.stringContaining('203.0.113.2')]);
    expect(config.clusters.map((cluster) => cluster.name)).toEqual(['default:backend', 'default:httpbin', 'default:ldap', 'mesh:envoy:admin']);
    expectEnvoyAccepts(config);
  });

  it('keeps the TrafficPermission of external services while the mesh has no MeshTrafficPermission', () => {
    const rbac = rbacOf(render({}), 'httpbin_default');
    expect(Object.keys((rbac.rules as JsonObject).policies as JsonObject)).toEqual(['allow-all-default']);
  });

  it('lets in the clients the MeshTrafficPermissions selecting an external service allow', () => {
    const config = render({ MeshTrafficPermission: [mtp('httpbin-clients', 'httpbin', allowBackend)] });
    const filters = chain(config, 'httpbin_default')?.filters as JsonObject[];
    expect(filters.filter((filter) => filter.name === 'envoy.filters.network.rbac')).toHaveLength(1);
    expect(rbacOf(config, 'httpbin_default')).toEqual({
      '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC',
      rules: { policies: { MeshTrafficPermission: { permissions: [{ any: true }], principals: [{ authenticated: { principalName: { exact: 'spiffe://default/backend' } } }] } } },
      statPrefix: 'inbound_10_0_1_1_10002.',
    });
    // Once the mesh has any, an external service none selects lets nobody in.
    expect(rbacOf(config, 'ldap_default').rules).toEqual({});
    expectEnvoyAccepts(config);
  });

  it('places the endpoints of other zones as a MeshLoadBalancingStrategy for all clients says', () => {
    const failover = targetRefPolicy('MeshLoadBalancingStrategy', 'failover', {
      targetRef: { kind: 'Mesh' },
      to: [{ targetRef: { kind: 'MeshService', name: 'backend' }, default: { localityAwareness: { crossZone: { failover: [{ to: { type: 'Only', zones: ['north'] } }, { to: { type: 'Any' } }] } } } }],
    });
    const config = render({ MeshLoadBalancingStrategy: [failover] });
    const assignment = config.endpoints.find((endpoints) => endpoints.clusterName === 'default:backend');
    expect((assignment?.endpoints as JsonObject[]).map((group) => [group.locality, group.priority])).toEqual([
      [{ zone: 'east' }, 2],
      [{ zone: 'north' }, 1],
    ]);
    expect(assignment?.policy).toEqual({ overprovisioningFactor: 200 });
    // A policy of some clients only has no rule for all of them: the egress leaves the endpoints as they are.
    const someClients = targetRefPolicy('MeshLoadBalancingStrategy', 'some', { ...failover.spec, targetRef: { kind: 'MeshService', name: 'web' } });
    expect(render({ MeshLoadBalancingStrategy: [someClients] }).endpoints).toEqual(render({}).endpoints);
    expectEnvoyAccepts(config);
  });

  it('applies locality awareness to the inline endpoints of external services', () => {
    const affinity = targetRefPolicy('MeshLoadBalancingStrategy', 'affinity', {
      targetRef: { kind: 'Mesh' },
      to: [{ targetRef: { kind: 'Mesh' }, default: { localityAwareness: { localZone: { affinityTags: [{ key: 'mesh.io/protocol' }] } } } }],
    });
    const config = render({ MeshLoadBalancingStrategy: [affinity] });
    const httpbin = config.clusters.find((cluster) => cluster.name === 'default:httpbin');
    expect(((httpbin?.loadAssignment as JsonObject).endpoints as JsonObject[])[0]).toMatchObject({ locality: { zone: 'west' }, loadBalancingWeight: 1 });
    expect((httpbin?.loadAssignment as JsonObject).policy).toEqual({ overprovisioningFactor: 200 });
    // An endpoint of no zone counts as another zone's, which no failover rule allows, as in the reference.
    const ldap = config.clusters.find((cluster) => cluster.name === 'default:ldap');
    expect((ldap?.loadAssignment as JsonObject).endpoints).toEqual([]);
    expectEnvoyAccepts(config);
  });
});

describe('zone ingress', () => {
  const local = zoneIngress('ingress-west', {
    zone: 'west',
    networking: { address: '10.0.0.9', port: 10001, advertisedAddress: '10.0.0.9', advertisedPort: 10001 },
    availableServices: [{ tags: { 'mesh.io/service': 'backend', version: 'v1' }, instances: 1, mesh: 'default' }],
  });
  const plain = meshContextOf({ meshSpec: meshSpec({ mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] } }), dataplanes: [], extra: { localZone: 'west' } });
  const serverNames = (config: ProxyConfig): string[] => ((config.listeners[0]?.filterChains ?? []) as JsonObject[]).flatMap((chain) => (chain.filterChainMatch as JsonObject).serverNames as string[]);

  it('forwards what the MeshHTTPRoutes send to: their destinations, their backends, and every service', () => {
    const route = targetRefPolicy('MeshHTTPRoute', 'split', {
      targetRef: { kind: 'MeshService', name: 'web' },
      to: [
        {
          targetRef: { kind: 'MeshService', name: 'backend' },
          rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }], default: { backendRefs: [{ kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v1' }, weight: 90 }] } }],
        },
      ],
    });
    expect(serverNames(renderZoneIngressConfig(local, [plain]))).toEqual([]);
    const config = renderZoneIngressConfig(local, [plain], {}, new Map([['default', indexTargetRefPolicies({ mesh: 'default', policies: { MeshHTTPRoute: [route] } })]]));
    expect(serverNames(config)).toEqual(['backend{mesh=default,version=v1}', 'backend{mesh=default}']);
    expectEnvoyAccepts(config);
  });
});
