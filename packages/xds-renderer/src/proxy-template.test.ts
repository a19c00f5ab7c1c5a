// ProxyTemplate: the profiles a template imports, its raw resources and its modifications.
import { describe, expect, it } from 'vitest';
import type { JsonObject, Listener } from './envoy.js';
import type { ProxyConfig } from './proxy.js';
import { policy, targetRefPolicy } from './test-fixtures.js';
import { changedResources, expectEnvoyAccepts, expectGolden } from './testing/golden.js';
import { targetRefTopology } from './testing/target-ref-topology.js';

const RAW_CLUSTER = `'@type': type.googleapis.com/envoy.config.cluster.v3.Cluster
name: audit
connect_timeout: 2s
type: STRICT_DNS
load_assignment:
  cluster_name: audit
  endpoints:
  - lb_endpoints:
    - endpoint:
        address:
          socket_address: { address: audit.internal, port_value: 9000 }
`;
const RAW_ROUTES = `'@type': type.googleapis.com/envoy.config.route.v3.RouteConfiguration
name: audit-routes
virtual_hosts:
- name: audit
  domains: ['*']
  routes:
  - match: { prefix: / }
    route: { cluster: audit }
`;
const RAW_LISTENER = `'@type': type.googleapis.com/envoy.config.listener.v3.Listener
name: audit
address:
  socket_address: { address: 127.0.0.1, port_value: 9901 }
filter_chains:
- filters:
  - name: envoy.filters.network.http_connection_manager
    typed_config:
      '@type': type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
      stat_prefix: audit
      rds:
        route_config_name: audit-routes
        config_source: { ads: {}, resource_api_version: V3 }
      http_filters:
      - name: envoy.filters.http.router
        typed_config:
          '@type': type.googleapis.com/envoy.extensions.filters.http.router.v3.Router
`;

const template = (name: string, service: string, conf: object) => policy('ProxyTemplate', name, { selectors: [{ match: { 'mesh.io/service': service } }], conf });

const modifications = [
  { cluster: { match: { name: 'backend' }, operation: 'patch', value: 'connectTimeout: 7s' } },
  { cluster: { match: { name: 'audit', origin: 'proxy-template-raw' }, operation: 'patch', value: 'dns_lookup_family: V4_ONLY' } },
  { cluster: { match: { name: 'grpc-api', origin: '' }, operation: 'remove' } },
  { listener: { match: { name: 'outbound:127.0.0.1:10005' }, operation: 'remove' } },
  { networkFilter: { match: { name: 'envoy.filters.network.tcp_proxy', listenerName: 'outbound:127.0.0.1:10002' }, operation: 'addBefore', value: "name: envoy.filters.network.local_ratelimit\ntypedConfig:\n  '@type': type.googleapis.com/envoy.extensions.filters.network.local_ratelimit.v3.LocalRateLimit\n  statPrefix: redis-limit\n  tokenBucket: { maxTokens: 5, fillInterval: 1s }\n" } },
  { httpFilter: { match: { name: 'envoy.filters.http.router', origin: 'inbound' }, operation: 'addBefore', value: "name: envoy.filters.http.fault\ntypedConfig:\n  '@type': type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault\n  abort: { httpStatus: 418, percentage: { numerator: 1 } }\n" } },
  { virtualHost: { match: { origin: 'inbound', routeConfigurationName: 'inbound:web' }, operation: 'add', value: 'name: extra\ndomains: [extra.mesh]\nroutes:\n- match: { prefix: / }\n  directResponse: { status: 204 }\n' } },
];

const listenerOf = (config: ProxyConfig, name: string): Listener | undefined => config.listeners.find((listener) => listener.name === name);
const chainFilters = (config: ProxyConfig, name: string): JsonObject[] => ((listenerOf(config, name)?.filterChains as JsonObject[])[0]?.filters as JsonObject[]) ?? [];
const inboundHcm = (config: ProxyConfig): JsonObject =>
  chainFilters(config, 'inbound:10.0.0.1:8080').find((filter) => filter.name === 'envoy.filters.network.http_connection_manager')?.typedConfig as JsonObject;

describe('ProxyTemplate', () => {
  const plain = targetRefTopology('STRICT');
  const before = plain.render(plain.web1, {});
  const conf = { imports: ['default-proxy'], resources: [{ name: 'audit', version: 'v1', resource: RAW_CLUSTER }, { name: 'audit', version: 'v1', resource: RAW_LISTENER }, { name: 'audit-routes', version: 'v1', resource: RAW_ROUTES }], modifications };
  const templated = targetRefTopology('STRICT', { extraPolicies: { ProxyTemplate: [template('web-template', 'web', conf)] } });
  const after = templated.render(templated.web1, {});

  it('adds its raw resources and applies its modifications, as the golden file shows, all valid Envoy', () => {
    expectGolden('proxy-template.golden.json', changedResources(before, after));
    expectEnvoyAccepts(after);
  });

  it('adds raw clusters, listeners and route configurations under their names', () => {
    expect(after.clusters.find((cluster) => cluster.name === 'audit')).toMatchObject({ connectTimeout: '2s', type: 'STRICT_DNS', dnsLookupFamily: 'V4_ONLY' });
    expect(listenerOf(after, 'audit')).toMatchObject({ address: { socketAddress: { address: '127.0.0.1', portValue: 9901 } } });
    expect(after.routes).toEqual([expect.objectContaining({ '@type': 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration', name: 'audit-routes' })]);
  });

  it('modifies what the sidecar generators produced', () => {
    expect(after.clusters.find((cluster) => cluster.name === 'backend')?.connectTimeout).toBe('7s');
    // An empty match field matches anything, as the reference reads it.
    expect(after.clusters.find((cluster) => cluster.name === 'grpc-api')).toBeUndefined();
    expect(listenerOf(after, 'outbound:127.0.0.1:10005')).toBeUndefined();
    expect(chainFilters(after, 'outbound:127.0.0.1:10002').map((filter) => filter.name)).toEqual(['envoy.filters.network.local_ratelimit', 'envoy.filters.network.tcp_proxy']);
    expect((inboundHcm(after).httpFilters as JsonObject[]).map((filter) => filter.name)).toEqual(['envoy.filters.http.fault', 'envoy.filters.http.router']);
    expect(((inboundHcm(after).routeConfig as JsonObject).virtualHosts as JsonObject[]).map((host) => host.name)).toEqual(['web', 'extra']);
  });

  it('applies its modifications after the targetRef policies, MeshProxyPatch included', () => {
    const proxyPatch = targetRefPolicy('MeshProxyPatch', 'patch', { targetRef: { kind: 'Mesh' }, default: { appendModifications: [{ cluster: { match: { name: 'backend' }, operation: 'Patch', value: 'connectTimeout: 3s\nperConnectionBufferLimitBytes: 1024' } }] } });
    const timeout = targetRefPolicy('MeshTimeout', 'timeout', { targetRef: { kind: 'Mesh' }, to: [{ targetRef: { kind: 'Mesh' }, default: { connectionTimeout: '1s' } }] });
    const config = templated.render(templated.web1, { MeshProxyPatch: [proxyPatch], MeshTimeout: [timeout] });
    expect(config.clusters.find((cluster) => cluster.name === 'backend')).toMatchObject({ connectTimeout: '7s', perConnectionBufferLimitBytes: 1024 });
    expect(config.clusters.find((cluster) => cluster.name === 'redis')?.connectTimeout).toBe('1s');
  });

  it('without the default-proxy profile, the proxy gets only the raw resources', () => {
    const bare = targetRefTopology('STRICT', { extraPolicies: { ProxyTemplate: [template('bare', 'web', { resources: [{ name: 'audit', version: 'v1', resource: RAW_CLUSTER }] })] } });
    const config = bare.render(bare.web1, {});
    expect(config.clusters.map((cluster) => cluster.name)).toEqual(['audit']);
    expect([config.listeners, config.endpoints, config.routes, config.secrets]).toEqual([[], [], [], []]);
  });

  it('leaves proxies its selectors do not match alone', () => {
    const other = targetRefTopology('STRICT', { extraPolicies: { ProxyTemplate: [template('other', 'backend', conf)] } });
    expect(other.render(other.web1, {})).toEqual(before);
  });
});
