// MeshProxyPatch: modifications of the generated resources, applied last.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from '../envoy.js';
import type { ProxyConfig } from '../proxy.js';
import { targetRefPolicy } from '../test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from '../testing/golden.js';
import { targetRefTopology } from '../testing/target-ref-topology.js';

const patch = (appendModifications: object[], name = 'patch') => targetRefPolicy('MeshProxyPatch', name, { targetRef: { kind: 'Mesh' }, default: { appendModifications } });

const listenerOf = (config: ProxyConfig, name: string): Listener | undefined => config.listeners.find((listener) => listener.name === name);
const hcmOf = (config: ProxyConfig, name: string): JsonObject =>
  (((listenerOf(config, name)?.filterChains as JsonObject[])[0]?.filters as JsonObject[]).find((filter) => filter.name === 'envoy.filters.network.http_connection_manager') as JsonObject).typedConfig as JsonObject;

const modifications = [
  { cluster: { operation: 'Add', value: 'name: extra\nconnect_timeout: 2s\ntype: STATIC\nload_assignment:\n  cluster_name: extra\n  endpoints:\n  - lb_endpoints:\n    - endpoint:\n        address:\n          socket_address: { address: 192.168.1.1, port_value: 8080 }\n' } },
  { cluster: { match: { name: 'backend' }, operation: 'Patch', value: 'connectTimeout: 7s\ncircuitBreakers:\n  thresholds:\n  - maxRetries: 9\n' } },
  { cluster: { match: { origin: 'outbound', name: 'redis' }, operation: 'Patch', jsonPatches: [{ op: 'replace', path: '/connectTimeout', value: '3s' }, { op: 'add', path: '/outlierDetection/interval', value: '9s' }] } },
  { cluster: { match: { name: 'grpc-api' }, operation: 'Remove' } },
  { listener: { match: { origin: 'inbound', tags: { 'mesh.io/service': 'web-tcp' } }, operation: 'Patch', value: 'perConnectionBufferLimitBytes: 32768' } },
  { listener: { match: { name: 'outbound:127.0.0.1:10005' }, operation: 'Remove' } },
  { networkFilter: { match: { name: 'envoy.filters.network.tcp_proxy', listenerName: 'outbound:127.0.0.1:10002' }, operation: 'Patch', value: "name: envoy.filters.network.tcp_proxy\ntypedConfig:\n  '@type': type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy\n  idleTimeout: 10s\n" } },
  { networkFilter: { match: { origin: 'outbound', listenerTags: { 'mesh.io/service': 'redis' } }, operation: 'AddFirst', value: "name: envoy.filters.network.local_ratelimit\ntypedConfig:\n  '@type': type.googleapis.com/envoy.extensions.filters.network.local_ratelimit.v3.LocalRateLimit\n  statPrefix: patched\n  tokenBucket: { maxTokens: 5, fillInterval: 1s }\n" } },
  { httpFilter: { match: { name: 'envoy.filters.http.router', origin: 'inbound' }, operation: 'AddBefore', value: "name: envoy.filters.http.fault\ntypedConfig:\n  '@type': type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault\n  abort: { httpStatus: 418, percentage: { numerator: 1 } }\n" } },
  { httpFilter: { match: { name: 'envoy.filters.http.router', listenerName: 'outbound:127.0.0.1:10001' }, operation: 'Patch', jsonPatches: [{ op: 'add', path: '/suppressEnvoyHeaders', value: true }] } },
  { virtualHost: { match: { routeConfigurationName: 'outbound:backend' }, operation: 'Patch', value: 'retryPolicy:\n  numRetries: 1\n' } },
  { virtualHost: { match: { origin: 'inbound' }, operation: 'Add', value: 'name: extra\ndomains: [extra.mesh]\nroutes:\n- match: { prefix: / }\n  directResponse: { status: 204 }\n' } },
];

describe('MeshProxyPatch', () => {
  const topology = targetRefTopology('STRICT');
  const before = topology.render(topology.web1, {});
  const after = topology.render(topology.web1, { MeshProxyPatch: [patch(modifications)] });

  it('modifies the resources as the golden file shows, all valid Envoy', () => {
    expectGolden('mesh-proxy-patch.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('adds, patches and removes clusters and listeners', () => {
    expect(after.clusters.find((cluster) => cluster.name === 'extra')).toMatchObject({ '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', connectTimeout: '2s', loadAssignment: { clusterName: 'extra' } });
    // A merge replaces durations and appends to lists.
    expect(after.clusters.find((cluster) => cluster.name === 'backend')).toMatchObject({ connectTimeout: '7s', circuitBreakers: { thresholds: [expect.objectContaining({ maxConnections: 1024 }), { maxRetries: 9 }] } });
    expect(after.clusters.find((cluster) => cluster.name === 'redis')).toMatchObject({ connectTimeout: '3s', outlierDetection: expect.objectContaining({ interval: '9s' }) });
    expect(after.clusters.find((cluster) => cluster.name === 'grpc-api')).toBeUndefined();
    expect(listenerOf(after, 'inbound:10.0.0.1:8100')?.perConnectionBufferLimitBytes).toBe(32768);
    expect(listenerOf(after, 'inbound:10.0.0.1:8080')?.perConnectionBufferLimitBytes).toBeUndefined();
    expect(listenerOf(after, 'outbound:127.0.0.1:10005')).toBeUndefined();
  });

  it('adds and patches network and HTTP filters, and virtual hosts', () => {
    const redisFilters = ((listenerOf(after, 'outbound:127.0.0.1:10002')?.filterChains as JsonObject[])[0]?.filters as JsonObject[]) ?? [];
    expect(redisFilters.map((filter) => filter.name)).toEqual(['envoy.filters.network.local_ratelimit', 'envoy.filters.network.tcp_proxy']);
    expect(redisFilters[1]?.typedConfig).toMatchObject({ idleTimeout: '10s', statPrefix: 'redis' });
    expect((hcmOf(after, 'inbound:10.0.0.1:8080').httpFilters as JsonObject[]).map((filter) => filter.name)).toEqual(['envoy.filters.http.fault', 'envoy.filters.http.router']);
    expect((hcmOf(after, 'outbound:127.0.0.1:10001').httpFilters as JsonObject[]).at(-1)?.typedConfig).toEqual({ '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router', suppressEnvoyHeaders: true });
    expect(((hcmOf(after, 'outbound:127.0.0.1:10001').routeConfig as JsonObject).virtualHosts as JsonObject[])[0]?.retryPolicy).toMatchObject({ numRetries: 1, perTryTimeout: '16s' });
    expect((((hcmOf(after, 'inbound:10.0.0.1:8080').routeConfig as JsonObject).virtualHosts as JsonObject[]).map((host) => host.name))).toEqual(['web', 'extra']);
  });

  it('applies after every other policy, and skips a modification it cannot apply', () => {
    const timeout = targetRefPolicy('MeshTimeout', 'timeout', { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '1s' } }] });
    const impossible = { cluster: { match: { name: 'redis' }, operation: 'Patch', jsonPatches: [{ op: 'replace', path: '/nowhere/deep', value: 1 }] } };
    const config = topology.render(topology.web1, { MeshTimeout: [timeout], MeshProxyPatch: [patch([impossible, { cluster: { match: { name: 'redis' }, operation: 'Patch', value: 'connectTimeout: 4s' } }])] });
    expect(config.clusters.find((cluster) => cluster.name === 'redis')?.connectTimeout).toBe('4s');
    expect(config.clusters.find((cluster) => cluster.name === 'backend')?.connectTimeout).toBe('1s');
  });
});
